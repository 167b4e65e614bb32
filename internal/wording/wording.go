// Package wording holds the small pieces of English that several services
// put into what a person reads.
package wording

import "strconv"

// Plural is "s" unless n is exactly one: "1 transaction", "0 transactions".
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Count is n followed by noun, pluralised: Count(2, "expense") is "2 expenses".
func Count(n int, noun string) string {
	return strconv.Itoa(n) + " " + noun + Plural(n)
}
