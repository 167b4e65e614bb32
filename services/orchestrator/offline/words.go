package offline

import (
	"strconv"
	"strings"
	"time"
)

var (
	categoryRe = mustCompile(`(?i)\b(?:in|under|category|as)\s+(?:the\s+)?(?:category\s+)?(?:(?:to|into|is|=)\s+)?['"]?([a-z][a-z ]{1,30}?)['"]?(?:\s+category)?\s*[.!]?$`)
	expNum     = mustCompile(`(?i)\b(?:expense|item|entry|number|no\.?|#)\s*#?\s*(\d{1,9})\b|#(\d{1,9})\b`)
)

// findCategory returns a trailing "in groceries" / "category groceries".
func findCategory(text string) (string, string, bool) {
	t := strings.TrimSpace(text)
	loc := categoryRe.FindStringSubmatchIndex(t)
	if loc == nil {
		return "", text, false
	}
	c := strings.TrimSpace(strings.ToLower(t[loc[2]:loc[3]]))
	if _, _, isDate := findDate(c, anyDay); isDate || monthOnly(c) {
		return "", text, false // "in March" is a date, not a category
	}
	return c, t[:loc[0]], true
}

// findNumber returns "expense 3" / "#3" style references.
func findNumber(text string) (int64, bool) {
	m := expNum.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	s := m[1]
	if s == "" {
		s = m[2]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil && n > 0
}

// filler words dropped when what is left of a sentence becomes an item.
var filler = map[string]bool{
	"i": true, "we": true, "we've": true, "i've": true, "ive": true, "i'd": true, "just": true, "spent": true, "spend": true, "paid": true, "pay": true, "bought": true, "buy": true,
	"add": true, "added": true, "record": true, "log": true, "put": true, "an": true, "a": true, "the": true, "my": true, "expense": true,
	"expenses": true, "item": true, "for": true, "on": true, "of": true, "please": true, "can": true, "you": true, "want": true, "to": true,
	"new": true, "it": true, "was": true, "cost": true, "costs": true, "me": true, "at": true, "and": true, "that": true, "is": true,
	"would": true, "like": true, "need": true, "could": true, "some": true, "about": true, "got": true, "had": true, "have": true,
	"in": true, "just now": true, "today's": true, "grabbed": true, "picked": true, "up": true, "another": true, "which": true, "took": true,
}

// moneyNouns name money, never what was bought.
var moneyNouns = map[string]bool{"pound": true, "pounds": true, "quid": true, "dollar": true, "dollars": true, "bucks": true,
	"euro": true, "euros": true, "yen": true, "rupee": true, "rupees": true, "pence": true, "cents": true, "money": true}

// itemFrom is what remains of text once amounts, dates and filler are gone.
func itemFrom(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == ',' || r == '.' || r == '!' || r == '?' || r == ':' || r == ';' || r == '"' || r == '-' || r == '(' || r == ')' ||
			strings.ContainsRune("£$€¥₹₩", r)
	})
	var kept []string
	for _, w := range words {
		if filler[strings.ToLower(w)] || moneyNouns[strings.ToLower(w)] {
			continue
		}
		kept = append(kept, strings.Trim(w, "'"))
	}
	return strings.ToLower(strings.Join(kept, " "))
}

var monthOnlyRe = mustCompile(`(?i)^(` + monthWords + `)$`)

func monthOnly(s string) bool { return monthOnlyRe.MatchString(strings.TrimSpace(s)) }

// anyDay stands in for "now" where only whether a phrase is a date matters.
var anyDay = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
