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
// here first looks for the words it cannot match without ("delete" or
// "remove"; "what" and then "say" or "tell"; "thanks" or "ok" at the
// start), read off its own syntax, and runs only when they are there.
// What it decides is the regexp's own: the words are only ever a
// necessary condition, so a text without them could not have matched.

// pattern is a regexp that runs only on text that meets needs (words in
// lower case, compared as (?i) compares).
type pattern struct {
	*regexp.Regexp
	needs need
}

// mustCompile is regexp.MustCompile with the words the pattern needs.
func mustCompile(expr string) *pattern {
	p := &pattern{Regexp: regexp.MustCompile(expr), needs: needed(expr)}
	patterns = append(patterns, p)
	return p
}

// patterns is every pattern compiled, for the test that their words are
// needed.
var patterns []*pattern

// may reports whether the pattern could match text.
func (p *pattern) may(text string) bool {
	if p.needs.none() {
		return true
	}
	var buf [256]byte
	return p.needs.met(foldInto(buf[:0], text))
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
func foldInto(buf []byte, text string) foldedText {
	if strings.IndexByte(text, "ſ"[0]) >= 0 || strings.IndexByte(text, "\u212a"[0]) >= 0 {
		text = foldedLetters.Replace(text) // rare: the bytes are mostly other letters'
	}
	start := len(buf)
	buf = append(buf, text...)
	var set uint64
	for i := start; i < len(buf); i++ {
		c := lowerASCII[buf[i]]
		buf[i], set = c, set|byteBit[c]
	}
	return foldedText{lower: buf[start:], bytes: set}
}

// foldedText is a text as foldInto folds it, and the bytes it holds.
type foldedText struct {
	lower []byte
	bytes uint64 // byteBit's bits of every byte of lower
}

// byteBit gives each byte a bit of a set, so that a word whose set is
// not within a text's cannot be in it, and most words are ruled out
// without a search. Letters and digits have a bit each; other bytes
// share the bits left, which only makes the test let more through.
var byteBit = func() (t [256]uint64) {
	for i := range t {
		switch c := byte(i); {
		case c >= 'a' && c <= 'z':
			t[i] = 1 << (c - 'a')
		case c >= '0' && c <= '9':
			t[i] = 1 << (26 + c - '0')
		default:
			t[i] = 1 << (36 + c%28)
		}
	}
	return t
}()

// bytesOf is the set of a word's bytes, as byteBit has them.
func bytesOf(w []byte) uint64 {
	var set uint64
	for _, c := range w {
		set |= byteBit[c]
	}
	return set
}

var foldedLetters = strings.NewReplacer("ſ", "s", "\u212a", "k")

// lowerASCII maps each byte to itself, but ASCII capitals to small ones.
var lowerASCII = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] += 'a' - 'A'
		}
	}
	return t
}()

// need is what a text must hold for a pattern to match it: one of
// words (at its start, when start); or every one of all, one after the
// other in that order; or one of any. The zero need is met by every
// text.
type need struct {
	words []word
	start bool
	all   []need
	any   []need
}

// word is a word of a need, in lower case, and the set of its bytes.
type word struct {
	text  []byte
	bytes uint64
}

func (n need) none() bool { return n.words == nil && n.all == nil && n.any == nil }

// met reports whether a text, folded as foldInto folds, meets the need.
func (n *need) met(t foldedText) bool {
	switch {
	case n.words != nil && n.start:
		for _, w := range n.words {
			if w.bytes&^t.bytes == 0 && bytes.HasPrefix(t.lower, w.text) {
				return true
			}
		}
		return false
	case n.words != nil:
		for _, w := range n.words {
			if w.bytes&^t.bytes == 0 && bytes.Contains(t.lower, w.text) {
				return true
			}
		}
		return false
	case n.all != nil:
		return n.end(t, 0) >= 0
	case n.any != nil:
		for i := range n.any {
			if n.any[i].met(t) {
				return true
			}
		}
		return false
	}
	return true
}

// end is where the need is first met in the text from from on: where
// the earliest of its words found there ends; for all, where the last
// ends when each is looked for after the one before; -1 when it is not
// met. The parts of a sequence match one after the other, each holding
// its words, and the earliest end of each leaves the most room for the
// next, so the need is met in order exactly when some match could hold
// the words in that order.
func (n *need) end(t foldedText, from int) int {
	switch {
	case n.words != nil:
		end := -1
		for _, w := range n.words {
			i := -1
			switch {
			case w.bytes&^t.bytes != 0:
			case !n.start:
				i = bytes.Index(t.lower[from:], w.text)
			case from == 0 && bytes.HasPrefix(t.lower, w.text):
				i = 0
			}
			if e := from + i + len(w.text); i >= 0 && (end < 0 || e < end) {
				end = e
			}
		}
		return end
	case n.all != nil:
		for i := range n.all {
			if from = n.all[i].end(t, from); from < 0 {
				return -1
			}
		}
		return from
	case n.any != nil:
		end := -1
		for i := range n.any {
			if e := n.any[i].end(t, from); e >= 0 && (end < 0 || e < end) {
				end = e
			}
		}
		return end
	}
	return from
}

// String writes the need as (a|b) & (c|d), for tests.
func (n need) String() string {
	var parts []string
	switch {
	case n.words != nil:
		for _, w := range n.words {
			parts = append(parts, string(w.text))
		}
		if n.start {
			return "^(" + strings.Join(parts, "|") + ")"
		}
		return "(" + strings.Join(parts, "|") + ")"
	case n.all != nil:
		for _, m := range n.all {
			parts = append(parts, m.String())
		}
		return "[" + strings.Join(parts, " & ") + "]"
	case n.any != nil:
		for _, m := range n.any {
			parts = append(parts, m.String())
		}
		return "[" + strings.Join(parts, " | ") + "]"
	}
	return ""
}

// oneOf is the need for one of words: none when a word is empty (every
// text holds it) or there are no words. A word that holds another is
// left out: where it is, the other is.
func oneOf(words []string) need {
	if len(words) == 0 || slices.Contains(words, "") {
		return need{}
	}
	var n need
	for _, w := range words {
		if !slices.ContainsFunc(words, func(v string) bool { return v != w && strings.Contains(w, v) }) {
			n.words = append(n.words, word{text: []byte(w), bytes: bytesOf([]byte(w))})
		}
	}
	return n
}

// startOf is the need for one of words at the start of the text: none
// when a word is empty or there are no words. A word that begins with
// another is left out: where it is, the other is.
func startOf(words []string) need {
	if len(words) == 0 || slices.Contains(words, "") {
		return need{}
	}
	n := need{start: true}
	for _, w := range words {
		if !slices.ContainsFunc(words, func(v string) bool { return v != w && strings.HasPrefix(w, v) }) {
			n.words = append(n.words, word{text: []byte(w), bytes: bytesOf([]byte(w))})
		}
	}
	return n
}

// allOf is the need for every one of ns, in their order: the parts of a
// sequence, whose matches follow each other. The needs met by every text
// are left out, and so are single characters (a space) beside longer
// words.
func allOf(ns []need) need {
	ns = slices.DeleteFunc(ns, need.none)
	if words := slices.DeleteFunc(slices.Clone(ns), func(n need) bool { return n.words != nil && n.shortest() < 2 }); len(words) > 0 {
		ns = words
	}
	switch len(ns) {
	case 0:
		return need{}
	case 1:
		return ns[0]
	}
	return need{all: ns}
}

// shortest is the length of the shortest word of a need of words, 0 for
// others.
func (n need) shortest() int {
	if n.words == nil {
		return 0
	}
	m := len(n.words[0].text)
	for _, w := range n.words {
		m = min(m, len(w.text))
	}
	return m
}

// maxExact bounds the strings a part of a pattern is known to match
// exactly, before only what it contains is kept.
const maxExact = 64

// needed reads off a pattern's syntax what every text it matches holds.
func needed(expr string) need {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return need{}
	}
	return factsOf(re.Simplify()).need()
}

// facts is what is known of the text a part of a pattern matches: that
// it is one of exact (in lower case), at the start of the text when
// start, or (exact nil) that it meets some.
type facts struct {
	exact []string
	start bool
	some  need
}

// need is what every text the part matches holds.
func (f facts) need() need {
	switch {
	case f.exact == nil:
		return f.some
	case f.start:
		return startOf(f.exact)
	}
	return oneOf(f.exact)
}

func factsOf(re *syntax.Regexp) facts {
	switch re.Op {
	case syntax.OpBeginText:
		return facts{exact: []string{""}, start: true}
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpEndText,
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
		return facts{some: factsOf(re.Sub[0]).need()}
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return facts{some: factsOf(re.Sub[0]).need()}
		}
	case syntax.OpConcat:
		return concatFacts(re.Sub)
	case syntax.OpAlternate:
		return alternateFacts(re.Sub)
	}
	return facts{} // any character, a star, no match: nothing known
}

// literalFacts: a literal in ASCII is matched exactly (in lower case); one
// with other letters, whose cases the search does not fold, holds its
// longest run of ASCII.
func literalFacts(runes []rune) facts {
	var b strings.Builder
	var runs []string
	run := 0
	for _, r := range runes {
		if r >= utf8.RuneSelf {
			runs, run = append(runs, b.String()[b.Len()-run:]), 0
			continue
		}
		c := byte(r)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
		run++
	}
	if len(runs) == 0 {
		return facts{exact: []string{b.String()}}
	}
	runs = append(runs, b.String()[b.Len()-run:])
	longest := slices.MaxFunc(runs, func(a, b string) int { return len(a) - len(b) })
	return facts{some: oneOf([]string{longest})}
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
// the sequence holds what each run of exact parts and each other part
// holds, in that order. A run that a sequence begins with begins the
// text when its first part does (^).
func concatFacts(subs []*syntax.Regexp) facts {
	cur, exact, start := []string{""}, true, false
	var needs []need
	run := func() need {
		if start {
			start = false
			return startOf(cur)
		}
		return oneOf(cur)
	}
	for i, s := range subs {
		f := factsOf(s)
		if i == 0 {
			start = f.start
		}
		if f.exact != nil && len(cur)*len(f.exact) <= maxExact {
			cur = product(cur, f.exact)
			continue
		}
		exact = false
		needs = append(needs, run())
		if f.exact != nil {
			cur = f.exact
		} else {
			needs = append(needs, f.some)
			cur = []string{""}
		}
	}
	if exact {
		return facts{exact: cur, start: start}
	}
	return facts{some: allOf(append(needs, run()))}
}

// alternateFacts: an alternation matches what one of its branches does.
func alternateFacts(subs []*syntax.Regexp) facts {
	var exact, words []string
	var some []need
	allExact, allStart, known := true, true, true
	for _, s := range subs {
		f := factsOf(s)
		if f.exact == nil {
			allExact = false
		} else {
			exact = union(exact, f.exact)
		}
		allStart = allStart && f.start
		switch n := f.need(); {
		case n.none():
			known = false
		case n.words != nil && !n.start:
			// Branches that each need one of some words need one of
			// all those words.
			for _, w := range n.words {
				words = union(words, []string{string(w.text)})
			}
		default:
			some = append(some, n)
		}
	}
	switch {
	case allExact && len(exact) <= maxExact:
		return facts{exact: exact, start: allStart}
	case !known:
		return facts{}
	}
	if words != nil {
		some = append(some, oneOf(words))
	}
	if len(some) == 1 {
		return facts{some: some[0]}
	}
	return facts{some: need{any: some}}
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
