// Package wording holds the small pieces of English that several services
// put into what a person reads.
package wording

// Plural is "s" unless n is exactly one: "1 transaction", "0 transactions".
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
