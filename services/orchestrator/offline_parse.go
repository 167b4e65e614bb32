package orchestrator

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The offline model's understanding of English finance requests. Each
// parse function is pure: text and the user's current time in, fields out.

var (
	amountRe = regexp.MustCompile(`(?i)(?:([£$€])\s?(\d{1,9}(?:[.,]\d{1,2})?)|(\d{1,9}(?:\.\d{1,2})?)\s?(gbp|usd|eur|pounds?|quid|dollars?|euros?)\b)`)
	isoDate  = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	dayMonth = regexp.MustCompile(`(?i)\b(?:on\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b`)
	monthDay = regexp.MustCompile(`(?i)\b(?:on\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\s+(\d{1,2})(?:st|nd|rd|th)?\b`)
	weekday  = regexp.MustCompile(`(?i)\b(?:on\s+)?(last|this\s+past|on)?\s*(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)
	relDay   = regexp.MustCompile(`(?i)\b(today|yesterday|the day before yesterday)\b`)
	category = regexp.MustCompile(`(?i)\b(?:in|under|category|as)\s+(?:the\s+)?(?:category\s+)?['"]?([a-z][a-z ]{1,30}?)['"]?(?:\s+category)?\s*$`)
	expNum   = regexp.MustCompile(`(?i)\b(?:expense|item|entry|number|no\.?|#)\s*#?\s*(\d{1,9})\b|#(\d{1,9})\b`)
)

var months = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12}

var weekdays = map[string]time.Weekday{"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6}

// money is an amount found in text: a decimal string and a currency ("" if
// the text named none).
type money struct {
	Amount   string
	Currency string
}

// findAmount returns the first amount in text and the text without it.
func findAmount(text string) (money, string, bool) {
	m := amountRe.FindStringSubmatchIndex(text)
	if m == nil {
		return money{}, text, false
	}
	sub := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return text[m[2*i]:m[2*i+1]]
	}
	var num, cur string
	if sub(1) != "" {
		num, cur = sub(2), map[string]string{"£": "GBP", "$": "USD", "€": "EUR"}[sub(1)]
	} else {
		num = sub(3)
		switch w := strings.ToLower(sub(4)); {
		case w == "gbp" || strings.HasPrefix(w, "pound") || w == "quid":
			cur = "GBP"
		case w == "usd" || strings.HasPrefix(w, "dollar"):
			cur = "USD"
		default:
			cur = "EUR"
		}
	}
	num = strings.Replace(num, ",", ".", 1)
	if whole, frac, ok := strings.Cut(num, "."); ok && len(frac) == 1 {
		num = whole + "." + frac + "0"
	}
	rest := text[:m[0]] + " " + text[m[1]:]
	return money{Amount: num, Currency: cur}, rest, true
}

// findDate returns the date named in text (relative to now, in now's zone)
// and the text without the phrase.
func findDate(text string, now time.Time) (string, string, bool) {
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	cut := func(loc []int) string { return text[:loc[0]] + " " + text[loc[1]:] }
	if loc := isoDate.FindStringSubmatchIndex(text); loc != nil {
		s := text[loc[0]:loc[1]]
		if _, err := time.Parse(time.DateOnly, s); err == nil {
			return s, cut(loc), true
		}
	}
	if loc := relDay.FindStringSubmatchIndex(text); loc != nil {
		back := map[string]int{"today": 0, "yesterday": 1, "the day before yesterday": 2}[strings.ToLower(text[loc[2]:loc[3]])]
		return today.AddDate(0, 0, -back).Format(time.DateOnly), cut(loc), true
	}
	dm := func(day, mon string, loc []int) (string, string, bool) {
		d, _ := strconv.Atoi(day)
		mo := months[strings.ToLower(mon)[:3]]
		if strings.ToLower(mon) == "sept" {
			mo = 9
		}
		t := time.Date(today.Year(), mo, d, 0, 0, 0, 0, now.Location())
		if t.Day() != d {
			return "", text, false // 31 Nov
		}
		if t.After(today) { // "3 Dec" said in November means last December
			t = t.AddDate(-1, 0, 0)
		}
		return t.Format(time.DateOnly), cut(loc), true
	}
	if loc := dayMonth.FindStringSubmatchIndex(text); loc != nil {
		if d, rest, ok := dm(text[loc[2]:loc[3]], text[loc[4]:loc[5]], loc); ok {
			return d, rest, true
		}
	}
	if loc := monthDay.FindStringSubmatchIndex(text); loc != nil {
		if d, rest, ok := dm(text[loc[4]:loc[5]], text[loc[2]:loc[3]], loc); ok {
			return d, rest, true
		}
	}
	if loc := weekday.FindStringSubmatchIndex(text); loc != nil {
		want := weekdays[strings.ToLower(text[loc[4]:loc[5]])]
		back := (int(today.Weekday()) - int(want) + 7) % 7
		if back == 0 {
			back = 7 // "last Friday" said on a Friday is a week ago
		}
		return today.AddDate(0, 0, -back).Format(time.DateOnly), cut(loc), true
	}
	return "", text, false
}

// findCategory returns a trailing "in groceries" / "category groceries".
func findCategory(text string) (string, string, bool) {
	loc := category.FindStringSubmatchIndex(strings.TrimSpace(text))
	if loc == nil {
		return "", text, false
	}
	t := strings.TrimSpace(text)
	return strings.TrimSpace(strings.ToLower(t[loc[2]:loc[3]])), t[:loc[0]], true
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
	"i": true, "i've": true, "ive": true, "just": true, "spent": true, "spend": true, "paid": true, "pay": true, "bought": true, "buy": true,
	"add": true, "added": true, "record": true, "log": true, "put": true, "an": true, "a": true, "the": true, "my": true, "expense": true,
	"expenses": true, "item": true, "for": true, "on": true, "of": true, "please": true, "can": true, "you": true, "want": true, "to": true,
	"new": true, "it": true, "was": true, "cost": true, "costs": true, "me": true, "at": true, "and": true, "that": true, "is": true, "with": true,
	"would": true, "like": true, "need": true, "could": true, "some": true, "about": true, "got": true, "had": true, "have": true,
}

// itemFrom is what remains of text once amounts, dates and filler are gone.
func itemFrom(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return r == ' ' || r == ',' || r == '.' || r == '!' || r == '?' || r == ':' || r == ';' || r == '"'
	})
	var kept []string
	for _, w := range words {
		if filler[strings.ToLower(w)] {
			continue
		}
		kept = append(kept, strings.Trim(w, "'"))
	}
	return strings.ToLower(strings.Join(kept, " "))
}
