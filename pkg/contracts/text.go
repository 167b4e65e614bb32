package contracts

import (
	"strings"
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
