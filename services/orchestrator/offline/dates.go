package offline

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// monthWords are the month names and abbreviations people write; a month
// is matched only as a whole word, so "market" is not March.
// monthPrefixes are the first three letters of every word in monthWords.
var monthPrefixes = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

const monthWords = `january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec`

var (
	isoDate  = mustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	dayMonth = mustCompile(`(?i)\b(?:on\s+)?(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?(?:\s+of)?\s+(` + monthWords + `)\b(?:\s+(\d{4})\b)?`)
	monthDay = mustCompile(`(?i)\b(?:on\s+)?(` + monthWords + `)\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4})\b)?`)
	weekday  = mustCompile(`(?i)\b(?:on\s+)?(?:last\s+|this\s+past\s+|this\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)
	relDay   = mustCompile(`(?i)\b(the day before yesterday|yesterday|last night|today|tonight|this morning|this afternoon|this evening|earlier today)\b`)
	ordinal  = mustCompile(`(?i)\b(?:on\s+)?the\s+(\d{1,2})(st|nd|rd|th)\b`)
	clock    = mustCompile(`(?i)\b(?:at\s+)?(?:\d{1,2}[:h]\d{2}(?:\s?[ap]\.?m\.?)?|\d{1,2}\s?[ap]\.?m\.?)(?:\s|$|[,.!?])`)
	daysAgo  = mustCompile(`(?i)\b(\d{1,3}|a|one|two|three|four|five|six|seven)\s+(days?|weeks?)\s+ago\b`)
)

var months = map[string]time.Month{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}

var weekdays = map[string]time.Weekday{"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6}

var smallNumbers = map[string]int{"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}

func monthOf(word string) time.Month { return months[strings.ToLower(word)[:3]] }

// withoutClock drops times of day ("at 8:30", "7pm"): they are neither
// amounts nor part of what was bought.
func withoutClock(text string) string {
	if !hasDigit(text) {
		return text
	}
	return clock.ReplaceAllString(text, " ")
}

func midnight(now time.Time) time.Time {
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
}

// findDate returns the day named in text (relative to now, in now's zone)
// and the text without the phrase. A day and month without a year that
// would lie in the future means the last one that has passed.
func findDate(text string, now time.Time) (string, string, bool) {
	today := midnight(now)
	cut := func(loc []int) string { return text[:loc[0]] + " " + text[loc[1]:] }
	// Each pattern runs only when the text holds what it cannot match
	// without: most of what people type names no date at all.
	lower, digits := folded(text), hasDigit(text)
	months := digits && containsAny(lower, monthPrefixes...)
	if loc := findIf(digits && strings.Contains(text, "-"), isoDate, text); loc != nil {
		s := text[loc[0]:loc[1]]
		if _, err := time.Parse(time.DateOnly, s); err == nil {
			return s, cut(loc), true
		}
	}
	if loc := findIf(containsAny(lower, "yesterday", "night", "today", "morning", "afternoon", "evening"), relDay, text); loc != nil {
		back := 0
		switch strings.ToLower(text[loc[2]:loc[3]]) {
		case "yesterday", "last night":
			back = 1
		case "the day before yesterday":
			back = 2
		}
		return today.AddDate(0, 0, -back).Format(time.DateOnly), cut(loc), true
	}
	if loc := findIf(strings.Contains(lower, "ago"), daysAgo, text); loc != nil {
		n, err := strconv.Atoi(text[loc[2]:loc[3]])
		if err != nil {
			n = smallNumbers[strings.ToLower(text[loc[2]:loc[3]])]
		}
		if strings.HasPrefix(strings.ToLower(text[loc[4]:loc[5]]), "week") {
			n *= 7
		}
		return today.AddDate(0, 0, -n).Format(time.DateOnly), cut(loc), true
	}
	dm := func(day, mon, year string, loc []int) (string, string, bool) {
		d, _ := strconv.Atoi(day)
		y := today.Year()
		if year != "" {
			y, _ = strconv.Atoi(year)
		}
		t := time.Date(y, monthOf(mon), d, 0, 0, 0, 0, now.Location())
		if t.Day() != d {
			return "", text, false // 31 Nov
		}
		if year == "" && t.After(today) { // "3 Dec" said in November means last December
			t = t.AddDate(-1, 0, 0)
		}
		return t.Format(time.DateOnly), cut(loc), true
	}
	sub := func(loc []int, i int) string {
		if loc[2*i] < 0 {
			return ""
		}
		return text[loc[2*i]:loc[2*i+1]]
	}
	if loc := findIf(months, dayMonth, text); loc != nil {
		if d, rest, ok := dm(sub(loc, 1), sub(loc, 2), sub(loc, 3), loc); ok {
			return d, rest, true
		}
	}
	if loc := findIf(months, monthDay, text); loc != nil {
		if d, rest, ok := dm(sub(loc, 2), sub(loc, 1), sub(loc, 3), loc); ok {
			return d, rest, true
		}
	}
	if loc := findIf(digits, ordinal, text); loc != nil {
		// "the 1st": this month's, or last month's when it is still to come.
		d, _ := strconv.Atoi(sub(loc, 1))
		t := time.Date(today.Year(), today.Month(), d, 0, 0, 0, 0, now.Location())
		if t.After(today) {
			t = time.Date(today.Year(), today.Month()-1, d, 0, 0, 0, 0, now.Location())
		}
		if t.Day() == d {
			return t.Format(time.DateOnly), cut(loc), true
		}
	}
	if loc := findIf(strings.Contains(lower, "day"), weekday, text); loc != nil {
		want := weekdays[strings.ToLower(sub(loc, 1))]
		back := (int(today.Weekday()) - int(want) + 7) % 7
		if back == 0 {
			back = 7 // "last Friday" said on a Friday is a week ago
		}
		return today.AddDate(0, 0, -back).Format(time.DateOnly), cut(loc), true
	}
	return "", text, false
}

var (
	lastNDays   = mustCompile(`(?i)\b(?:last|past|previous)\s+(\d{1,3})\s+days?\b`)
	lastNWeeks  = mustCompile(`(?i)\b(?:last|past|previous)\s+(\d{1,2}|two|three|four)\s+weeks\b`)
	sinceRe     = mustCompile(`(?i)\bsince\s+(.+)$`)
	betweenRe   = mustCompile(`(?i)\b(?:from|between)\s+(.+?)\s+(?:to|and|until|till)\s+(.+)$`)
	quarterRe   = mustCompile(`(?i)\b(?:q([1-4])|(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter)(?:\s+(?:of\s+)?(\d{4}))?\b`)
	yearQuarter = mustCompile(`(?i)\b(\d{4})[\s-]*q([1-4])\b`)
	isoMonth    = mustCompile(`\b(\d{4})-(0[1-9]|1[0-2])\b`)
	monthName   = mustCompile(`(?i)\b(?:in|for|during|of|from)\s+(` + monthWords + `)\b(?:\s+(\d{4})\b)?|\b(` + monthWords + `)\s+(\d{4})\b`)
	plainYear   = mustCompile(`(?i)\b(?:in|for|during|of|year)\s+((?:19|20)\d{2})\b|^((?:19|20)\d{2})$`)
	allTimeRe   = mustCompile(`(?i)\b(all[\s-]time|ever|altogether|in total|overall|so far|all my expenses|everything)\b`)
)

var (
	sinceMonth = mustCompile(`(?i)^(?:the\s+)?(?:start\s+of\s+|beginning\s+of\s+)?(` + monthWords + `)(?:\s+(\d{4}))?$`)
	yearOnly   = mustCompile(`^((?:19|20)\d{2})$`)
)

var quarterWords = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4}

// rangeOf reads a date range from a question, in the shared range grammar
// (contracts.RangeGrammar); this month when the question names none.
func rangeOf(text string, now time.Time) string {
	lower := strings.ToLower(text)
	today := midnight(now)
	if r, ok := betweenRange(text, now); ok {
		return r
	}
	if m := sinceRe.FindStringSubmatch(text); m != nil {
		if from, ok := sinceDay(strings.TrimRight(m[1], "?.! "), now); ok {
			return "since_" + from
		}
	}
	if m := lastNDays.FindStringSubmatch(lower); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 0 && n <= 999 {
			return "last_" + m[1] + "_days"
		}
	}
	if m := lastNWeeks.FindStringSubmatch(lower); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			n = smallNumbers[m[1]]
		}
		return fmt.Sprintf("last_%d_days", 7*n)
	}
	for _, r := range []struct{ phrase, rng string }{
		{"today", "today"}, {"yesterday", "yesterday"}, {"this week", "this_week"}, {"last week", "last_week"}, {"past week", "last_7_days"},
		{"this month", "this_month"}, {"last month", "last_month"}, {"past month", "last_30_days"},
		{"this quarter", "this_quarter"}, {"last quarter", "last_quarter"},
		{"this year", "this_year"}, {"year to date", "this_year"}, {"ytd", "this_year"}, {"last year", "last_year"}, {"past year", "last_365_days"},
	} {
		if strings.Contains(lower, r.phrase) {
			return r.rng
		}
	}
	if m := yearQuarter.FindStringSubmatch(text); m != nil {
		return m[1] + "-Q" + m[2]
	}
	if m := quarterRe.FindStringSubmatch(text); m != nil {
		q, _ := strconv.Atoi(m[1])
		if q == 0 {
			q = quarterWords[strings.ToLower(m[2])]
		}
		y := today.Year()
		if m[3] != "" {
			y, _ = strconv.Atoi(m[3])
		} else if time.Month(3*(q-1)+1) > today.Month() {
			y-- // Q4 asked in March is last year's
		}
		return fmt.Sprintf("%04d-Q%d", y, q)
	}
	if m := isoMonth.FindString(text); m != "" {
		return m
	}
	if m := monthName.FindStringSubmatch(text); m != nil {
		word, year := m[1], m[2]
		if word == "" {
			word, year = m[3], m[4]
		}
		mo := monthOf(word)
		y := today.Year()
		if year != "" {
			y, _ = strconv.Atoi(year)
		} else if mo > today.Month() {
			y--
		}
		return fmt.Sprintf("%04d-%02d", y, mo)
	}
	if m := plainYear.FindStringSubmatch(strings.TrimRight(strings.TrimSpace(text), "?.!")); m != nil {
		return m[1] + m[2]
	}
	if allTimeRe.MatchString(text) {
		return "all_time"
	}
	return "this_month"
}

// betweenRange reads "from 1 Oct to 15 Oct" and "between … and …".
func betweenRange(text string, now time.Time) (string, bool) {
	m := betweenRe.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	from, _, ok := findDate(m[1], now)
	if !ok {
		return "", false
	}
	to, _, ok := findDate(m[2], now)
	if !ok {
		if end := strings.ToLower(m[2]); !strings.Contains(end, "now") && !strings.Contains(end, "today") {
			return "", false
		}
		to = midnight(now).Format(time.DateOnly)
	}
	if from > to {
		return "", false
	}
	return from + ".." + to, true
}

// sinceDay reads the start of "since …": a day, a month ("since March" is
// the 1st of the last March that has begun), a year, or a weekday.
func sinceDay(phrase string, now time.Time) (string, bool) {
	today := midnight(now)
	p := strings.TrimSpace(phrase)
	if m := sinceMonth.FindStringSubmatch(p); m != nil {
		mo := monthOf(m[1])
		y := today.Year()
		if m[2] != "" {
			y, _ = strconv.Atoi(m[2])
		} else if mo > today.Month() {
			y--
		}
		return fmt.Sprintf("%04d-%02d-01", y, mo), true
	}
	if m := yearOnly.FindStringSubmatch(p); m != nil {
		return m[1] + "-01-01", true
	}
	switch strings.ToLower(p) {
	case "the start of the year", "the beginning of the year", "january", "new year":
		return fmt.Sprintf("%04d-01-01", today.Year()), true
	case "the start of the month", "the beginning of the month":
		return fmt.Sprintf("%04d-%02d-01", today.Year(), today.Month()), true
	}
	if d, _, ok := findDate(p, now); ok && d <= today.Format(time.DateOnly) {
		return d, true
	}
	return "", false
}

// findIf is re's first match in text with its groups, looked for only
// when may holds: a cheap test of something re cannot match without.
func findIf(may bool, re *pattern, text string) []int {
	if !may {
		return nil
	}
	return re.FindStringSubmatchIndex(text)
}

// folded is text in lower case as the patterns' (?i) compares it, the
// long s (ſ, which folds to s) included, for substring tests that stand
// in front of a pattern.
func folded(text string) string {
	return strings.ReplaceAll(strings.ToLower(text), "ſ", "s")
}

func hasDigit(text string) bool {
	return strings.ContainsAny(text, "0123456789")
}

func containsAny(lower string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}
