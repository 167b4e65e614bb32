package offline

import (
	"strconv"
	"strings"
)

var units = map[string]int{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
	"eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}

var tens = map[string]int{"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}

// spelledMoney is a number written in words just before a currency word:
// "twelve pounds", "twenty-five dollars", "a hundred euros". Only then is
// a word a number; "two coffees" stays words.
var spelledMoney = mustCompile(`(?i)\b((?:a|one|two|three|four|five|six|seven|eight|nine)\s+hundred(?:\s+and)?\s+)?` +
	`((?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?|` +
	`one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)?` +
	`\s*\b(pounds?|quid|dollars?|bucks|euros?)\b`)

var slang = mustCompile(`(?i)\b(?:a\s+)?(fiver|tenner)\b`)

// spelledToDigits writes amounts spelled in words as digits, so that the
// one reader of amounts judges them: "twelve pounds" is "12 pounds", "a
// fiver" is "£5".
func spelledToDigits(text string) string {
	lower := folded(text)
	if !containsAny(lower, "fiver", "tenner", "pound", "quid", "dollar", "buck", "euro") {
		return text
	}
	text = slang.ReplaceAllStringFunc(text, func(s string) string {
		if strings.HasSuffix(strings.ToLower(s), "fiver") {
			return "£5"
		}
		return "£10"
	})
	return spelledMoney.ReplaceAllStringFunc(text, func(s string) string {
		m := spelledMoney.FindStringSubmatch(s)
		if strings.TrimSpace(m[1]) == "" && m[2] == "" {
			return s // "12 pounds", or a currency word alone
		}
		n := 0
		if h := strings.Fields(strings.ToLower(m[1])); len(h) > 0 {
			n = 100 * max(units[h[0]], 1) // "a hundred" is 100
		}
		for _, w := range strings.FieldsFunc(strings.ToLower(m[2]), func(r rune) bool { return r == ' ' || r == '-' }) {
			n += tens[w] + units[w]
		}
		return strconv.Itoa(n) + " " + m[3]
	})
}
