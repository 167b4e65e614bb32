package offline

import (
	"regexp"
	"testing"
	"unicode"
	"unicode/utf8"
)

// TestNeededWords: the words a pattern looks for first are read off its
// syntax: whole words from an alternation, every word a sequence needs,
// the longest run of letters the folding search can compare, nothing
// when a match needs no word.
func TestNeededWords(t *testing.T) {
	for expr, want := range map[string]string{
		`(?i)\b(delete|remove|drop|erase)\b`:                          "(delete|remove|drop|erase)",
		`(?i)^(?:please\s+)?(?:add|record)\b`:                         "(add|record)",
		`(?i)\b(?:dépens|année)`:                                      "(pens|ann)",
		`(?i)\bmonths?\b`:                                             "(month)",
		`(?i)\b(?:cheaper|dearer)\s+than\b|\b(?:best|worst)\s+year\b`: "[[(cheaper|dearer) & (than)] | [(best|worst) & (year)]]",
		`(?i)\bwhat\s+(?:did|have)\s+(?:i|we)\s+(?:say|told)\b`:       "[(what) & (did|have) & (say|told)]",
		`(?i)^\d+$`:                   "(0|1|2|3|4|5|6|7|8|9)",
		`(?i)^(hi|hello)?\b`:          "", // matches the empty text
		`(?i)\b(?:on|for)\s+(.+)|.*x`: "(on|for|x)",
		`(?i)\b(?:on|for)\s+(.+)|\d*`: "", // the second branch needs nothing
		`(?i)\bé\b`:                   "", // no ASCII to look for

		// Words at the start of the text, and in the order of a sequence.
		`(?i)^(?:thanks|ta|ok|okay)\b`:        "^(thanks|ta|ok)", // okay begins with ok
		`(?i)^(?:please\s+)?add\b`:            "(add)",           // after what may come first
		`(?i)\bmonth\s+(?:on|over)\s+month\b`: "[(month) & (on|over) & (month)]",
	} {
		if got := needed(expr).String(); got != want {
			t.Errorf("needed(%s) = %s, want %s", expr, got, want)
		}
	}
}

// TestWordsInOrder: a sequence needs its words one after the other, and
// a pattern anchored at the start needs its first words there; a word
// that only turns up elsewhere (the "on" of "month", the "ta" of "taxi")
// rules the pattern out.
func TestWordsInOrder(t *testing.T) {
	for _, c := range []struct {
		expr, text string
		may        bool
	}{
		{`(?i)\bmonth\s+(?:on|over)\s+month\b`, "what did I spend this month?", false},
		{`(?i)\bmonth\s+(?:on|over)\s+month\b`, "month on month", true},
		{`(?i)\bmonth\s+(?:on|over)\s+month\b`, "on month", false},
		{`(?i)^(?:thanks|ta|ok)\b`, "add a taxi ride", false},
		{`(?i)^(?:thanks|ta|ok)\b`, "Ta very much", true},
		{`(?i)^(?:thanks|ta|ok)\b`, "okay", true}, // the words, not the whole match
		{`(?i)^(?:please\s+)?add\b`, "please add 5 tea", true},
		{`(?i)x(?:^add)`, "x add", false}, // the start cannot come after an x
		{`(?i)(?:^|, )(?:item|amount)`, "date 1, amount 2", true},
	} {
		p := &pattern{Regexp: regexp.MustCompile(c.expr), needs: needed(c.expr)}
		if got := p.may(c.text); got != c.may {
			t.Errorf("%s needs %s: may(%q) = %v, want %v", c.expr, p.needs, c.text, got, c.may)
		}
		if p.Regexp.MatchString(c.text) && !p.may(c.text) {
			t.Errorf("%s matches %q, but it needs %s", c.expr, c.text, p.needs)
		}
	}
}

// TestWordsAreNeeded: no pattern of the model is skipped on a text it
// matches: over every phrasing of the corpus, in other cases, and with
// the letters outside ASCII that (?i) folds onto ASCII ones.
func TestWordsAreNeeded(t *testing.T) {
	t.Parallel()
	texts, _, replies := corpus(t)
	texts = append(texts, replies...)
	texts = append(texts, "ſpent 5 on ſoap", "\u212aeep", "DELETE EXPENSE 3", "Proposed: Add expense 'x' 1?", "1 234,56 €")
	for _, text := range texts {
		wordsAreNeeded(t, text)
	}
}

// FuzzPatternWords: whatever the text, a pattern that matches it is never
// skipped for want of its words.
func FuzzPatternWords(f *testing.F) {
	for _, s := range []string{"add 12.50 lunch today", "ſpent £5", "what did I spend this month?", "supprime la dépense 3",
		"\u212aWD 3.5", "Proposed: Change expense #3: amount 12 → 15?"} {
		f.Add(s)
	}
	f.Fuzz(wordsAreNeeded)
}

func wordsAreNeeded(t *testing.T, text string) {
	t.Helper()
	for i, p := range patterns {
		if p.Regexp.MatchString(text) && !p.may(text) {
			t.Fatalf("pattern %d %s matches %q, but it needs %s", i, p, text, p.needs)
		}
	}
}

// TestOnlyTwoLettersFoldIntoASCII: the word search folds ſ to s and the
// Kelvin sign to k and no other letter outside ASCII, because (?i) folds
// no other one onto an ASCII letter.
func TestOnlyTwoLettersFoldIntoASCII(t *testing.T) {
	for r := rune(utf8.RuneSelf); r <= unicode.MaxRune; r++ {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if f < utf8.RuneSelf && r != 'ſ' && r != '\u212a' {
				t.Errorf("%U folds to %q", r, f)
			}
		}
	}
}
