package offline

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// Most patterns fail on most of what people type, and Go's regexp pays
// for a failure in full: it tries every position of the text. A pattern
// here first looks for the words it cannot match without ("delete",
// "remove", …), read off its own syntax, and runs only when one is
// there. What it decides is the regexp's own: the words are only ever a
// necessary condition, so a text without them could not have matched.

// pattern is a regexp that runs only on text holding one of needs (in
// lower case, compared as (?i) compares); with needs empty it always runs.
type pattern struct {
	*regexp.Regexp
	needs [][]byte
}

// mustCompile is regexp.MustCompile with the words the pattern needs.
func mustCompile(expr string) *pattern {
	p := &pattern{Regexp: regexp.MustCompile(expr)}
	for _, w := range needed(expr) {
		p.needs = append(p.needs, []byte(w))
	}
	patterns = append(patterns, p)
	return p
}

// patterns is every pattern compiled, for the test that their words are
// needed.
var patterns []*pattern

// may reports whether the pattern could match text.
func (p *pattern) may(text string) bool {
	if len(p.needs) == 0 {
		return true
	}
	var buf [256]byte
	lower := foldInto(buf[:0], text)
	for _, w := range p.needs {
		if bytes.Contains(lower, w) {
			return true
		}
	}
	return false
}

func (p *pattern) MatchString(s string) bool { return p.may(s) && p.Regexp.MatchString(s) }

func (p *pattern) FindString(s string) string {
	if !p.may(s) {
		return ""
	}
	return p.Regexp.FindString(s)
}

func (p *pattern) FindStringIndex(s string) []int {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindStringIndex(s)
}

func (p *pattern) FindStringSubmatch(s string) []string {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindStringSubmatch(s)
}

func (p *pattern) FindStringSubmatchIndex(s string) []int {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindStringSubmatchIndex(s)
}

func (p *pattern) FindAllStringIndex(s string, n int) [][]int {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindAllStringIndex(s, n)
}

func (p *pattern) FindAllStringSubmatch(s string, n int) [][]string {
	if !p.may(s) {
		return nil
	}
	return p.Regexp.FindAllStringSubmatch(s, n)
}

func (p *pattern) ReplaceAllString(src, repl string) string {
	if !p.may(src) {
		return src
	}
	return p.Regexp.ReplaceAllString(src, repl)
}

func (p *pattern) ReplaceAllStringFunc(src string, repl func(string) string) string {
	if !p.may(src) {
		return src
	}
	return p.Regexp.ReplaceAllStringFunc(src, repl)
}

// foldInto appends text to buf as (?i) compares its ASCII letters: in
// lower case, with the long s (ſ) as s and the Kelvin sign as k, the
// only letters outside ASCII that fold to one inside. Other bytes are
// kept, and match no word of the ASCII that needs holds.
func foldInto(buf []byte, text string) []byte {
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c == 0xc5 && strings.HasPrefix(text[i:], "ſ"):
			c, i = 's', i+len("ſ")-1
		case c == 0xe2 && strings.HasPrefix(text[i:], "\u212a"):
			c, i = 'k', i+len("\u212a")-1
		}
		buf = append(buf, c)
	}
	return buf
}

// maxExact bounds the strings a part of a pattern is known to match
// exactly, before only what it contains is kept.
const maxExact = 64

// needed reads off a pattern's syntax the words every match contains
// one of (lower case, ASCII); none when no such words are known, and
// then the pattern always runs.
func needed(expr string) []string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	words := factsOf(re.Simplify()).contains()
	// A word that holds another is found whenever it is: "month" for
	// "months" and "month".
	all := slices.Clone(words)
	return slices.DeleteFunc(words, func(w string) bool {
		return slices.ContainsFunc(all, func(v string) bool { return v != w && strings.Contains(w, v) })
	})
}

// facts is what is known of the text a part of a pattern matches: that
// it is one of exact, or (exact nil) that it contains one of some, or
// (both nil) nothing.
type facts struct {
	exact []string
	some  []string
}

// contains is one of the words every match contains; nil when unknown.
func (f facts) contains() []string {
	if f.exact == nil {
		return f.some
	}
	if slices.Contains(f.exact, "") {
		return nil
	}
	return f.exact
}

// better is whichever of two word lists filters more: longer shortest
// word, then fewer words.
func better(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	if sa, sb := shortest(a), shortest(b); sa != sb {
		if sa > sb {
			return a
		}
		return b
	}
	if len(b) < len(a) {
		return b
	}
	return a
}

func shortest(ws []string) int {
	n := len(ws[0])
	for _, w := range ws {
		n = min(n, len(w))
	}
	return n
}

func factsOf(re *syntax.Regexp) facts {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return facts{exact: []string{""}}
	case syntax.OpLiteral:
		return literalFacts(re.Rune)
	case syntax.OpCharClass:
		return classFacts(re.Rune)
	case syntax.OpCapture:
		return factsOf(re.Sub[0])
	case syntax.OpQuest:
		if f := factsOf(re.Sub[0]); f.exact != nil && len(f.exact) < maxExact {
			return facts{exact: union(f.exact, []string{""})}
		}
	case syntax.OpPlus:
		return facts{some: factsOf(re.Sub[0]).contains()}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return facts{some: factsOf(re.Sub[0]).contains()}
		}
	case syntax.OpConcat:
		return concatFacts(re.Sub)
	case syntax.OpAlternate:
		return alternateFacts(re.Sub)
	}
	return facts{} // any character, a star, no match: nothing known
}

// literalFacts: a literal in ASCII is matched exactly (in lower case); one
// with other letters, whose cases the search does not fold, contains its
// longest run of ASCII.
func literalFacts(runes []rune) facts {
	var b, run, best strings.Builder
	ascii := true
	for _, r := range runes {
		if r >= utf8.RuneSelf {
			ascii = false
			if run.Len() > best.Len() {
				best.Reset()
				best.WriteString(run.String())
			}
			run.Reset()
			continue
		}
		c := byte(r)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
		run.WriteByte(c)
	}
	if ascii {
		return facts{exact: []string{b.String()}}
	}
	if run.Len() > best.Len() {
		best.Reset()
		best.WriteString(run.String())
	}
	if best.Len() == 0 {
		return facts{}
	}
	return facts{some: []string{best.String()}}
}

// classFacts: a small class of ASCII characters (a digit, a space) is
// one of them exactly.
func classFacts(ranges []rune) facts {
	var out []string
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if hi >= utf8.RuneSelf || hi-lo > 9 {
			return facts{}
		}
		for r := lo; r <= hi; r++ {
			out = union(out, []string{strings.ToLower(string(r))})
		}
	}
	if len(out) == 0 || len(out) > 10 {
		return facts{}
	}
	return facts{exact: out}
}

// concatFacts joins the exact parts of a sequence while they stay few;
// what is contained is the best of what each run of parts contains.
func concatFacts(subs []*syntax.Regexp) facts {
	cur, exact := []string{""}, true
	var best []string
	for _, s := range subs {
		f := factsOf(s)
		if f.exact != nil && len(cur)*len(f.exact) <= maxExact {
			cur = product(cur, f.exact)
			continue
		}
		exact = false
		best = better(best, facts{exact: cur}.contains())
		if f.exact != nil {
			cur = f.exact
		} else {
			best = better(best, f.some)
			cur = []string{""}
		}
	}
	if exact {
		return facts{exact: cur}
	}
	return facts{some: better(best, facts{exact: cur}.contains())}
}

// alternateFacts: an alternation matches what one of its branches does.
func alternateFacts(subs []*syntax.Regexp) facts {
	var exact, some []string
	allExact, allSome := true, true
	for _, s := range subs {
		f := factsOf(s)
		if f.exact == nil {
			allExact = false
		} else {
			exact = union(exact, f.exact)
		}
		if w := f.contains(); w == nil {
			allSome = false
		} else {
			some = union(some, w)
		}
	}
	switch {
	case allExact && len(exact) <= maxExact:
		return facts{exact: exact}
	case allSome:
		return facts{some: some}
	}
	return facts{}
}

func product(a, b []string) []string {
	var out []string
	for _, x := range a {
		for _, y := range b {
			out = union(out, []string{x + y})
		}
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, w := range b {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}
