package offline

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// numberRe is anything a person may write as a number: signs, thousands
// and decimal separators of either convention, and exponents, so that
// "-5", "1.234,50" and "1e308" are read whole and judged, never cut into a
// smaller number that looks fine.
var numberRe = mustCompile(`[+\-−]?\d(?:[\d.,]*\d)?(?:[eE][+\-]?\d+)?`)

// symbolCurrency maps the signs written before an amount.
var symbolCurrency = map[string]string{"£": "GBP", "$": "USD", "€": "EUR", "¥": "JPY", "₹": "INR", "₩": "KRW"}

// wordCurrency maps words and codes written next to an amount, lower case.
// Upper-case ISO 4217 codes ("CHF", "KWD") are recognised from the table;
// lower-case ones only from this list, because "all", "top" and "try"
// are words before they are currencies.
var wordCurrency = map[string]string{
	"pound": "GBP", "pounds": "GBP", "quid": "GBP", "gbp": "GBP", "sterling": "GBP",
	"dollar": "USD", "dollars": "USD", "bucks": "USD", "usd": "USD",
	"euro": "EUR", "euros": "EUR", "eur": "EUR",
	"yen": "JPY", "jpy": "JPY", "rupee": "INR", "rupees": "INR", "inr": "INR",
	"franc": "CHF", "francs": "CHF", "chf": "CHF", "cad": "CAD", "aud": "AUD", "nzd": "NZD",
	"sek": "SEK", "nok": "NOK", "dkk": "DKK", "kronor": "SEK", "pln": "PLN", "zloty": "PLN", "czk": "CZK",
	"kwd": "KWD", "dinar": "KWD", "dinars": "KWD", "bhd": "BHD", "aed": "AED", "dirham": "AED", "dirhams": "AED",
	"sgd": "SGD", "hkd": "HKD", "cny": "CNY", "yuan": "CNY", "rmb": "CNY", "krw": "KRW", "won": "KRW",
	"zar": "ZAR", "rand": "ZAR", "brl": "BRL", "reais": "BRL", "mxn": "MXN", "pesos": "MXN",
}

// pence words: "50p" and "80 pence" are GBP minor units.
var penceWords = map[string]bool{"p": true, "pence": true, "pennies": true}

// found is one amount found in text: the decimal it means, its currency
// ("" when the text named none), where it was, and what is wrong with it
// ("" when nothing).
type found struct {
	Amount   string
	Currency string
	Marked   bool // a sign, code or word says it is money
	Problem  string
	Written  string // as the person wrote it, for questions
	start    int
	end      int
}

// findAmounts returns every number in text that may be an amount, with the
// currency marks around it.
func findAmounts(text string) []found {
	var out []found
	for _, loc := range numberRe.FindAllStringIndex(text, -1) {
		start, end := loc[0], loc[1]
		num := text[start:end]
		// A number glued to a word ("3rd", "4x", "b12") is not an amount;
		// "50p" is.
		after := text[end:]
		if w := leadingWord(after); w != "" && !penceWords[strings.ToLower(w)] && wordCurrency[strings.ToLower(w)] == "" && !isCode(w) {
			continue
		}
		if w, _ := trailingWord(text[:start]); w != "" && !isCode(w) && !lowerCode(w) {
			continue
		}
		f := found{start: start, end: end}
		// Before: a sign and a currency symbol ("-£5", "£ 12"), or a code ("USD 20").
		before := strings.TrimRight(text[:start], " ")
		for sym, cur := range symbolCurrency {
			if strings.HasSuffix(before, sym) {
				f.Currency, f.Marked = cur, true
				f.start = len(before) - len(sym)
				if s := strings.TrimRight(before[:f.start], " "); strings.HasSuffix(s, "-") || strings.HasSuffix(s, "−") {
					num = "-" + strings.TrimLeft(num, "+-−")
					f.start = strings.LastIndexAny(s, "-−")
				}
			}
		}
		if !f.Marked {
			if w, at := trailingWord(before); w != "" && (isCode(w) || lowerCode(w)) {
				f.Currency, f.Marked, f.start = strings.ToUpper(w), true, at
			}
		}
		// After: a code or a word ("12,5 euros", "20 USD", "50p").
		if w := leadingWord(strings.TrimLeft(after, " ")); w != "" {
			lw := strings.ToLower(w)
			if cur := cmpOr(wordCurrency[lw], codeOf(w)); f.Marked && cur != "" && cur != f.Currency {
				f.Problem = "two currencies" // "$5 euros"
			}
			wordEnd := end + (len(after) - len(strings.TrimLeft(after, " "))) + len(w)
			switch {
			case penceWords[lw]:
				f.Currency, f.Marked, f.end = "GBP", true, wordEnd
				n, err := strconv.ParseInt(num, 10, 64)
				switch {
				case err != nil && allDigits(num):
					f.Problem = "too large"
				case err == nil && n < 0 || strings.HasPrefix(num, "−"):
					f.Problem = "negative"
				case err != nil:
					f.Problem = "pence must be a whole number"
				default:
					num = contracts.FormatMinor(n, "GBP")
				}
			case wordCurrency[lw] != "":
				f.Currency, f.Marked, f.end = wordCurrency[lw], true, wordEnd
			case isCode(w):
				f.Currency, f.Marked, f.end = w, true, wordEnd
			}
		} else if !f.Marked {
			rest := strings.TrimLeft(after, " ")
			for sym, cur := range symbolCurrency {
				if strings.HasPrefix(rest, sym) { // 12.50€
					f.Currency, f.Marked, f.end = cur, true, end+(len(after)-len(rest))+len(sym)
				}
			}
		}
		f.Written = strings.TrimSpace(text[f.start:f.end])
		if f.Problem == "" {
			f.Amount, f.Problem = readNumber(num, f.Currency)
		}
		out = append(out, f)
	}
	return out
}

// pickAmount chooses the amount of an expense among those found: the first
// one marked as money, else the only bare number, else the only one with
// decimals. ok is false when there is none or it is not clear which.
func pickAmount(all []found) (f found, ok bool, ambiguous bool) {
	for _, a := range all {
		if a.Marked {
			return a, true, false
		}
	}
	switch len(all) {
	case 0:
		return found{}, false, false
	case 1:
		return all[0], true, false
	}
	var dec []found
	for _, a := range all {
		if strings.ContainsAny(a.Written, ".,") {
			dec = append(dec, a)
		}
	}
	if len(dec) == 1 {
		return dec[0], true, false
	}
	return found{}, false, true
}

// cutOut removes the found amount (with its sign, symbol or word) from text.
func cutOut(text string, f found) string { return text[:f.start] + " " + text[f.end:] }

// readNumber reads a number as a person wrote it into a plain decimal, or
// says what is wrong with it: a sign, an exponent, separators that could
// mean two things, too many digits, more decimals than the currency has.
func readNumber(num, currency string) (string, string) {
	if strings.HasPrefix(num, "-") || strings.HasPrefix(num, "−") {
		return "", "negative"
	}
	num = strings.TrimPrefix(num, "+")
	if strings.ContainsAny(num, "eE") {
		return "", "too large"
	}
	dots, commas := strings.Count(num, "."), strings.Count(num, ",")
	dec := ""
	switch {
	case dots == 0 && commas == 0:
		dec = num
	case dots > 0 && commas > 0:
		// The last separator is the decimal one; the other groups thousands.
		last := max(strings.LastIndex(num, "."), strings.LastIndex(num, ","))
		point, group := num[last:last+1], ","
		if point == "," {
			group = "."
		}
		whole := num[:last]
		if strings.Contains(whole, point) || !groupedByThousands(whole, group) {
			return "", "ambiguous"
		}
		dec = strings.ReplaceAll(whole, group, "") + "." + num[last+1:]
	default:
		sep := "."
		if commas > 0 {
			sep = ","
		}
		parts := strings.Split(num, sep)
		switch {
		case len(parts) == 2 && len(parts[1]) <= 2:
			dec = parts[0] + "." + parts[1] // 12.5, 12,50
		case len(parts) == 2 && len(parts[1]) == 3 && sep == "." && (currency == "" || digitsOf(currency) != 3):
			return "", "ambiguous" // 1.234: a thousand, or three decimals?
		case len(parts) == 2 && len(parts[1]) == 3 && sep == ".":
			dec = num // 1.250 KWD
		case groupedByThousands(num, sep):
			dec = strings.ReplaceAll(num, sep, "") // 1,234 or 1.234.567
		default:
			return "", "ambiguous"
		}
	}
	a := contracts.Amount(dec)
	if p := a.Problem(); p != "" {
		if strings.Contains(p, "out of range") {
			return "", "too large"
		}
		if strings.Contains(p, "more than zero") {
			return "", "zero"
		}
		return "", "ambiguous"
	}
	if currency != "" {
		if _, err := a.Minor(currency); err != nil {
			return "", "decimals"
		}
	}
	return dec, ""
}

// amountQuestion asks again for an amount that could not be used.
func amountQuestion(f found, item string) string {
	how := "How much did you pay?"
	if item != "" {
		how = fmt.Sprintf("How much did you pay for %s?", item)
	}
	switch f.Problem {
	case "negative":
		return "An expense can't be a negative amount. " + how
	case "too large":
		return fmt.Sprintf("%s is too large for me to record as an amount. %s", f.Written, how)
	case "zero":
		return "An expense must be more than zero. " + how
	case "decimals":
		return fmt.Sprintf("%s has more decimals than %s allows. %s", f.Written, f.Currency, how)
	case "which":
		return "I see more than one number there. " + how
	case "pence must be a whole number":
		return "Pence must be a whole number. " + how
	}
	return fmt.Sprintf("I can't tell which amount %s means. %s Please write it like 1234.50.", f.Written, how)
}

func digitsOf(currency string) int {
	d, _ := contracts.MinorUnits(currency)
	return d
}

// groupedByThousands reports whether s is digits in groups of three after
// a first group of one to three, separated by sep: 1,234 or 12.345.678.
func groupedByThousands(s, sep string) bool {
	parts := strings.Split(s, sep)
	if len(parts) < 2 || len(parts[0]) == 0 || len(parts[0]) > 3 || !allDigits(parts[0]) {
		return false
	}
	for _, p := range parts[1:] {
		if len(p) != 3 || !allDigits(p) {
			return false
		}
	}
	return true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// isCode reports whether w is an ISO 4217 code written in capitals.
func isCode(w string) bool {
	return len(w) == 3 && w == strings.ToUpper(w) && contracts.ValidCurrency(w)
}

func codeOf(w string) string {
	if isCode(w) {
		return w
	}
	return ""
}

func lowerCode(w string) bool {
	c, ok := wordCurrency[strings.ToLower(w)]
	return ok && len(w) == 3 && strings.EqualFold(c, w)
}

// leadingWord is the run of letters at the start of s.
func leadingWord(s string) string {
	i := 0
	for i < len(s) && isLetter(s[i]) {
		i++
	}
	return s[:i]
}

// trailingWord is the run of letters at the end of s, and where it starts.
func trailingWord(s string) (string, int) {
	i := len(s)
	for i > 0 && isLetter(s[i-1]) {
		i--
	}
	return s[i:], i
}
