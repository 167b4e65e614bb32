package statements

import (
	"math/big"
	"regexp"
	"strings"
	"unicode"
)

// The text of receipt lines, made regular before it is read: OCR's stray
// spaces closed up ("200, 00", "合 計"), letters folded for matching, and
// the amounts found with their currency marks.

var (
	// "200, 00": a space OCR put after a decimal separator.
	reSpacedDecimals = regexp.MustCompile(`(\d[.,]) (\d{2})\b`)
	// "07. 10. 2025": spaces after a date's points.
	reSpacedDate = regexp.MustCompile(`\b(\d{1,2})\. ?(\d{1,2})\. ?(\d{2,4})\b`)
	// "¥2, 268", "¥2. 449": a space OCR put after a marked amount's
	// thousands separator.
	reSpacedThousands = regexp.MustCompile(`([¥￥$€£]\s?\d{1,3}[.,]) (\d{3})\b`)
	// "07/02/201314:28": a date's year run into the time after it.
	reGluedTime = regexp.MustCompile(`(\b\d{1,2}[./-]\d{1,2}[./-]\d{4})(\d{1,2}:\d{2})`)
	// "\95": tesseract reads a till's ¥ as a backslash; nothing else on
	// a receipt is one.
	reBackslashYen = regexp.MustCompile(`\\\s?(\d)`)
)

// fullWidth maps the full-width digits and marks of Japanese print to
// their ASCII forms ("￥３３０" is ¥330).
var fullWidth = strings.NewReplacer("０", "0", "１", "1", "２", "2", "３", "3", "４", "4", "５", "5", "６", "6", "７", "7",
	"８", "8", "９", "9", "，", ",", "．", ".", "／", "/", "：", ":", "－", "-", "￥", "¥", "％", "%", "＄", "$")

// normaliseReceiptText closes up what OCR spaced out.
func normaliseReceiptText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return ""
	}
	s = fullWidth.Replace(s)
	s = reBackslashYen.ReplaceAllString(s, "¥$1")
	s = reSpacedThousands.ReplaceAllString(s, "$1$2")
	s = reSpacedDecimals.ReplaceAllString(s, "$1$2")
	s = reSpacedDate.ReplaceAllString(s, "$1.$2.$3")
	s = reGluedTime.ReplaceAllString(s, "$1 $2")
	// Japanese is written without spaces; OCR puts them between
	// characters.
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		if r == ' ' && i > 0 && i+1 < len(rs) && isCJK(rs[i-1]) && (isCJK(rs[i+1]) || unicode.IsDigit(rs[i+1]) && isCJK(rs[i-1]) && rs[i-1] != '計') {
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) || r == 'ー' || r == '々'
}

var accentFold = strings.NewReplacer("ä", "a", "ö", "o", "ü", "u", "ß", "ss", "é", "e", "è", "e", "ê", "e", "ë", "e",
	"à", "a", "â", "a", "á", "a", "ç", "c", "î", "i", "ï", "i", "í", "i", "ô", "o", "ó", "o", "ù", "u", "û", "u", "ú", "u",
	"ñ", "n", "ÿ", "y")

// foldText is s in lower case without accents, for matching keywords.
func foldText(s string) string { return accentFold.Replace(strings.ToLower(s)) }

// foldWords splits folded text into words: runs of letters (a CJK run is
// one word), with "sub-total" kept as two.
func foldWords(f string) []string {
	return strings.FieldsFunc(f, func(r rune) bool { return !unicode.IsLetter(r) })
}

// ramount is an amount found in a line's text.
type ramount struct {
	raw      string // as printed, without the currency
	val      *big.Rat
	decimals int
	ccy      string // a currency its marks name
	yen      bool   // marked with ¥ or 円
	dollar   bool   // marked with a bare $
	pos      int    // byte offset in the line's text
}

var (
	// A number as amounts are printed, with its marks: "€4.904,94",
	// "$2,516.28", "-0,41", "17,47-", "1,280円", "¥1,280", "EUR 3,00".
	reAmountToken = regexp.MustCompile(`(?:(?:[A-Z]{3}|US\$|C\$|A\$|Rs\.?|[€£$¥￥₹])\s?)?[-−]?\s?(?:[€£$¥￥]\s?)?\d{1,3}(?:[.,'’]\d{3})+(?:[.,]\d{1,2})?(?:\s?(?:[A-Z]{3}\b|[€£円]))?-?|(?:(?:[A-Z]{3}|US\$|C\$|A\$|Rs\.?|[€£$¥￥₹])\s?)?[-−]?\s?(?:[€£$¥￥]\s?)?\d+(?:[.,]\d{1,2})?(?:\s?(?:[A-Z]{3}\b|[€£円]))?-?`)
	// Dates and times, taken out of a line before its amounts are looked
	// for ("13.01.2020" is not 13.01, nor "17:25" an amount).
	reNotAmount = regexp.MustCompile(`(?i)\d{1,4}[./-]\d{1,2}[./-]\d{1,4}|\d{1,2}:\d{2}(?::\d{2})?|\d+(?:[.,]\d+)?\s?%|\d+(?:[.,]\d+)?\s?(?:kg|g|l|ml|cl|lb|oz|stk|st|x)\b`)
)

// findAmounts returns the amounts printed in s: numbers with two decimals
// (or one, which OCR leaves of a blurred pair), and whole numbers marked
// as yen. Weights, quantities, percentages, dates and times are not.
func findAmounts(s string) []ramount {
	masked := []byte(s)
	for _, m := range reNotAmount.FindAllStringIndex(s, -1) {
		for i := m[0]; i < m[1]; i++ {
			masked[i] = ' '
		}
	}
	var out []ramount
	for _, m := range reAmountToken.FindAllStringIndex(string(masked), -1) {
		// Not a currency's code: a word's capitals ("TTC 23,45").
		if m[1]-m[0] > 3 && isUpperASCII(masked[m[0]:m[0]+3]) && !isCurrency(string(masked[m[0]:m[0]+3])) {
			m[0] += 3
		}
		if m[1]-m[0] > 3 && isUpperASCII(masked[m[1]-3:m[1]]) && !isCurrency(string(masked[m[1]-3:m[1]])) {
			m[1] -= 3
		}
		for m[0] < m[1] && masked[m[0]] == ' ' {
			m[0]++
		}
		for m[1] > m[0] && masked[m[1]-1] == ' ' {
			m[1]--
		}
		if m[0] == m[1] {
			continue
		}
		tok := string(masked[m[0]:m[1]])
		// A currency code a PDF glued to the word before
		// ("FactuurtotaalEUR 49,99") is not part of that word.
		if m[0] > 0 && m[1]-m[0] > 3 && unicode.IsLetter(rune(masked[m[0]-1])) && isCurrency(string(masked[m[0]:m[0]+3])) {
			m[0] += 3
			for m[0] < m[1] && masked[m[0]] == ' ' {
				m[0]++
			}
		}
		// The token must stand alone: no digit or letter glued before
		// it, no digit after ("0,414" is not 0,41).
		if m[0] > 0 {
			prev := rune(masked[m[0]-1])
			if unicode.IsDigit(prev) || prev == '.' || prev == ',' || unicode.IsLetter(prev) && !strings.ContainsAny(tok[:1], "€£$¥") {
				continue
			}
		}
		if m[1] < len(masked) {
			next := masked[m[1]]
			if next >= '0' && next <= '9' || next == '%' || (next == '.' || next == ',') && m[1]+1 < len(masked) && masked[m[1]+1] >= '0' && masked[m[1]+1] <= '9' {
				continue
			}
		}
		if a, ok := readReceiptAmount(tok); ok {
			a.pos = m[0]
			out = append(out, a)
		}
		if len(out) > 20 {
			break
		}
	}
	return out
}

// readReceiptAmount reads one amount token.
func readReceiptAmount(tok string) (ramount, bool) {
	var a ramount
	s := strings.TrimSpace(tok)
	neg := false
	if strings.HasSuffix(s, "-") {
		neg, s = true, strings.TrimSpace(s[:len(s)-1])
	}
	// Currency marks, before or after.
	for changed := true; changed; {
		changed = false
		for _, m := range []struct{ mark, ccy string }{{"US$", "USD"}, {"C$", "CAD"}, {"A$", "AUD"}, {"Rs.", "INR"}, {"Rs", "INR"}, {"₹", "INR"}, {"€", "EUR"}, {"£", "GBP"}, {"円", "JPY"}, {"¥", ""}, {"￥", ""}, {"$", ""}} {
			if strings.HasPrefix(s, m.mark) || strings.HasSuffix(s, m.mark) {
				s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s, m.mark), m.mark))
				switch m.mark {
				case "¥", "￥", "円":
					a.yen = true
				case "$":
					a.dollar = true
				}
				if m.ccy != "" {
					a.ccy = m.ccy
				}
				changed = true
			}
		}
		if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "−") {
			_, n := firstRune(s)
			neg, s, changed = !neg, strings.TrimSpace(s[n:]), true
		}
		if len(s) > 3 {
			if c := s[:3]; isCurrency(c) && !unicode.IsDigit(rune(s[0])) {
				a.ccy, s, changed = c, strings.TrimSpace(s[3:]), true
			} else if c := s[len(s)-3:]; isCurrency(c) && !unicode.IsDigit(rune(c[0])) {
				a.ccy, s, changed = c, strings.TrimSpace(s[:len(s)-3]), true
			}
		}
	}
	if s == "" || !unicode.IsDigit(rune(s[0])) {
		return a, false
	}
	if a.ccy == "JPY" {
		a.yen = true
	}
	// The last separator followed by one or two digits is the decimal
	// point; the others group thousands.
	intPart, frac := s, ""
	if i := strings.LastIndexAny(s, ".,"); i >= 0 && len(s)-i-1 <= 2 {
		intPart, frac = s[:i], s[i+1:]
	}
	if strings.ContainsAny(intPart, ".,'’") {
		if !groupedByAny(intPart) {
			return a, false
		}
		intPart = strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, intPart)
	}
	if !digits(intPart) || len(intPart) > 12 || (frac != "" && !digits(frac)) {
		return a, false
	}
	// A whole number is money only where a currency marks it ("¥1,280",
	// "Rs 1939"); else it is a count, a code or a number.
	if len(frac) == 1 || frac == "" && !a.yen && a.ccy == "" {
		return a, false
	}
	if len(intPart) > 1 && intPart[0] == '0' {
		return a, false // "02981": a phone number's part
	}
	v, ok := new(big.Rat).SetString(intPart + "." + frac + "0")
	if !ok {
		return a, false
	}
	if neg {
		v.Neg(v)
	}
	a.val, a.decimals = v, len(frac)
	a.raw = strings.TrimSpace(tok)
	return a, true
}

// groupedByAny: "1.234.567", "2,516", "1'234": groups of three after a
// first of one to three, all with the same separator.
func groupedByAny(s string) bool {
	sep := strings.IndexAny(s, ".,'’")
	if sep < 0 {
		return true
	}
	r, _ := firstRuneOf(s[sep:])
	return groupedBy(s, byte(r)) || r == '’' && groupedBy(strings.ReplaceAll(s, "’", "'"), '\'')
}

func firstRuneOf(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 0
}

func isUpperASCII(b []byte) bool {
	for _, c := range b {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}
