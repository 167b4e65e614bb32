package contracts

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// CleanText readies what a person typed for the conversation. Text that is
// not valid UTF-8 or holds a NUL is refused, since either would be stored as
// something other than what was sent; other control characters (all but
// tab, line feed and carriage return) and the bidirectional embedding,
// override and isolate characters, which can make text read differently from
// what it says, are removed. The error is a *ValidationError naming field.
func CleanText(field, s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", &ValidationError{Field: field, Problem: "is not valid UTF-8 text"}
	}
	if strings.IndexByte(s, 0) >= 0 {
		return "", &ValidationError{Field: field, Problem: "must not contain a NUL character"}
	}
	if !strings.ContainsFunc(s, unsafeRune) {
		return s, nil
	}
	return strings.Map(func(r rune) rune {
		if unsafeRune(r) {
			return -1
		}
		return r
	}, s), nil
}

// SafeText reports whether s is text CleanText would pass unchanged: what
// the `text` validation tag requires of every human text crossing the bus.
func SafeText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 && !strings.ContainsFunc(s, unsafeRune)
}

// unsafeRune is a control character other than tab, LF and CR, or a
// bidirectional formatting character that reorders what follows it.
func unsafeRune(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Text from outside purser — mail headers, attachment and upload names,
// statement lines, a model's answer that may quote them — is chosen by
// whoever wrote it. Before a person sees it, it passes QuoteText (inside a
// sentence the server writes) or VisibleText (a model's own markdown), so
// that it can neither hide or reorder what follows it on a screen nor turn
// into markdown of the server's sentence. Clients read every sentence as
// markdown: a plain-text client removes the backslash escapes with
// UnquoteText, a terminal prints TerminalText.

// PlainText is untrusted text made one visible line: invalid UTF-8 becomes
// U+FFFD; control characters, bidirectional formatting characters and
// other invisible formatting (zero-width characters, tag characters) are
// removed; line breaks, tabs and every run of white space become one
// space; the ends are trimmed. It does not escape markdown: the result is
// data (a mail's subject as a tool returns it), not yet text for a person.
func PlainText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case hiddenRune(r):
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// QuoteText is the neutraliser of untrusted text placed in a sentence a
// person reads: PlainText, then quoted for markdown so that it shows as
// the characters it holds and never as markup. Every character CommonMark
// (and the widget's renderer) could read as emphasis, code, a link, an
// image, an autolink, raw HTML or strikethrough is backslash-escaped; so
// are an entity reference's '&', the ':' of "://" and the '.' of "www."
// (bare autolinks), and a first character that would open a heading, a
// quote, a list or a setext underline. Letters, digits, spaces and an
// underscore between two letters or digits stay as they are. It does not
// make text safe for HTML: the renderer must still build text nodes.
func QuoteText(s string) string {
	s = PlainText(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	rs := []rune(s)
	for i, r := range rs {
		if quoteRune(rs, i) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// quoteRune reports whether rs[i] needs a backslash in QuoteText.
func quoteRune(rs []rune, i int) bool {
	r := rs[i]
	switch r {
	case '\\', '`', '*', '[', ']', '<', '>', '~':
		return true
	case '_':
		return i == 0 || i == len(rs)-1 || !wordRune(rs[i-1]) || !wordRune(rs[i+1])
	case '&':
		return entityAt(rs[i+1:])
	case ':':
		return i+2 < len(rs) && rs[i+1] == '/' && rs[i+2] == '/'
	case '.':
		if i >= 3 && strings.EqualFold(string(rs[i-3:i]), "www") && (i == 3 || !wordRune(rs[i-4])) {
			return true
		}
		return orderedMarker(rs, i)
	case ')':
		return orderedMarker(rs, i)
	case '#', '+', '-', '=', '|':
		return i == 0
	}
	return false
}

// orderedMarker reports whether rs[i], a '.' or ')', ends an ordered list
// marker at the start of the text: "1. " or "12)" alone.
func orderedMarker(rs []rune, i int) bool {
	head := rs[:i]
	if len(head) == 0 || len(head) > 9 || i+1 < len(rs) && rs[i+1] != ' ' {
		return false
	}
	for _, r := range head {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// entityAt reports whether rs (what follows an '&') would make an HTML
// entity or numeric character reference, which CommonMark decodes:
// "&#x202E;" is the right-to-left override itself.
func entityAt(rs []rune) bool {
	n := 0
	for _, r := range rs {
		switch {
		case r == ';':
			return n > 0
		case r == '#' && n == 0, r < 0x80 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			n++
		default:
			return false
		}
	}
	return false
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// UnquoteText removes the backslash escapes of markdown text: what a
// client that shows text without rendering markdown (a terminal, a
// proposal's plain summary) prints. A backslash escapes only ASCII
// punctuation, as in CommonMark; any other backslash stays.
func UnquoteText(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && asciiPunct(s[i+1]) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func asciiPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// VisibleText keeps what a model wrote, markdown and line breaks
// included, but removes what could hide or reorder text: invalid UTF-8
// becomes U+FFFD, a carriage return a line feed (or nothing, before a
// line feed), and every control character but tab and line feed, every
// bidirectional formatting character and other invisible formatting is
// removed. It is for text that may be markdown on purpose; text from
// outside placed in a server sentence passes QuoteText instead.
func VisibleText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !strings.ContainsFunc(s, func(r rune) bool { return r == '\r' || hiddenRune(r) }) {
		return s
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return '\n'
		case hiddenRune(r):
			return -1
		}
		return r
	}, s)
}

// TerminalText is what a terminal prints of a sentence from the server:
// its markdown escapes removed (UnquoteText) and, of what that leaves,
// only what VisibleText keeps, so that no escape sequence, carriage
// return or bidirectional override reaches the terminal.
func TerminalText(s string) string { return VisibleText(UnquoteText(s)) }

// hiddenRune is a rune a person cannot see that changes how text around
// it shows: a control character other than tab and line feed (C0, DEL,
// C1), a bidirectional mark, embedding, override or isolate, a zero-width
// space, joiner or non-joiner, a word joiner or invisible operator, a
// byte order mark, an interlinear annotation character, a Unicode tag
// character, or a line or paragraph separator.
func hiddenRune(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0x061c, r == 0x180e, r == 0xfeff:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x2028 && r <= 0x202e, r >= 0x2060 && r <= 0x2069:
		return true
	case r >= 0xfff9 && r <= 0xfffb, r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}
