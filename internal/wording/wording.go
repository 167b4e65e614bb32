// Package wording holds the small pieces of English that several services
// put into what a person reads.
package wording

import (
	"strconv"
	"unicode/utf8"
)

// Plural is "s" unless n is exactly one: "1 transaction", "0 transactions".
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// CutBytes is s cut to at most n bytes without splitting a character: for
// bounds stated in bytes (a column, a subject, a file name).
func CutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// CutRunes is s cut to at most n characters: for bounds stated in
// characters (a validated field's max).
func CutRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}

// Size writes n bytes the way people read it: "20 MiB" for a whole
// number of MiB, "1.5 MiB", "12 KiB", "300 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// Shorten is s cut to at most n characters, ending in "…" when cut.
func Shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
