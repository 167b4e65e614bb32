package statements

import (
	"regexp"
	"strings"
)

// What OCR gets wrong in statements, put right where the context leaves
// one reading: a heading a letter off ("aid out"), a month whose J came
// out as a bracket ("01) an 24"), letters for digits inside an amount
// ("1O3.5O"). Whatever is still wrong is caught by the balances
// (reconcile.go).

// editDistance is the Levenshtein distance of a and b, up to limit+1.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// fuzzyHeading is the column kind of an OCR'd heading that names one
// within an edit or two: one for names of 4 to 7 letters, two from 8.
// Shorter names ("in", "out") must be read exactly.
func fuzzyHeading(s string) int {
	best, bestD := colOther, 3
	try := func(kind int, names []string) {
		for _, n := range names {
			limit := 0
			switch l := len([]rune(n)); {
			case l >= 8:
				limit = 2
			case l >= 4:
				limit = 1
			}
			if limit == 0 {
				continue
			}
			if d := editDistance(s, n, limit); d <= limit && d < bestD {
				best, bestD = kind, d
			}
		}
	}
	try(colDate, []string{"date", "datum", "fecha", "receivedbyus", "transactiondate", "postingdate", "postdate"})
	try(colBalance, pdfBalanceNames)
	try(colOut, pdfOutNames)
	try(colIn, pdfInNames)
	try(colAmount, pdfAmountNames)
	try(colDesc, pdfDescNames)
	return best
}

// ocrDigits puts digits for the letters OCR takes them for.
var ocrDigits = strings.NewReplacer("O", "0", "o", "0", "D", "0", "Q", "0", "l", "1", "I", "1", "|", "1", "!", "1", "i", "1",
	"S", "5", "s", "5", "B", "8", "Z", "2", "z", "2")

var reOCRAmount = regexp.MustCompile(`^[£€$(+\-]?[0-9OoDQlI|!iSsBZz][0-9OoDQlI|!iSsBZz,. ]*[.,:;][0-9OoDQlI|!iSsBZz]{2}\)?(?:\s?(?:CR|DR|C R|D R|-))?$`)

var reLostPoint = regexp.MustCompile(`^[0-9]{3,9}$`)

// ocrAmountText is an OCR'd money cell with its digits put right, and
// whether it changed. A cell that is mostly letters is left as it is.
func ocrAmountText(s string) (string, bool) {
	orig := strings.TrimSpace(s)
	if reLostPoint.MatchString(orig) {
		// "951" under an amount's heading: "9.51" without its point,
		// which OCR drops at times. The balances check the reading.
		return orig[:len(orig)-2] + "." + orig[len(orig)-2:], true
	}
	// Quote marks and degree signs are grain beside the figures.
	s = strings.TrimRight(strings.TrimLeft(orig, "“”\"'‘’`^*~_"), "“”\"'‘’`°^*~_:;")
	if !reOCRAmount.MatchString(s) {
		return orig, false
	}
	digits := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	if digits*2 < len(strings.Map(func(r rune) rune {
		if strings.ContainsRune("0123456789OoDQlI|!iSsBZz", r) {
			return r
		}
		return -1
	}, s)) {
		return s, false
	}
	mark := ""
	if up := strings.ToUpper(s); strings.HasSuffix(strings.ReplaceAll(up, " ", ""), "CR") || strings.HasSuffix(strings.ReplaceAll(up, " ", ""), "DR") {
		i := strings.LastIndexAny(up, "CD")
		mark, s = strings.ReplaceAll(up[i:], " ", ""), s[:i]
	}
	s = strings.ReplaceAll(s, " ", "")
	body := ocrDigits.Replace(s)
	if i := strings.LastIndexAny(body, ":;"); i > 0 {
		body = body[:i] + "." + body[i+1:] // "3:22": a point read as a colon
	}
	// "2.215.09": a thousands comma read as a point, the last one
	// being the decimal point.
	if i := strings.LastIndexAny(body, ".,"); i > 0 && strings.Count(body, ".")+strings.Count(body, ",") > 1 {
		body = strings.NewReplacer(".", ",", ",", ",").Replace(body[:i]) + "." + body[i+1:]
	}
	out := body + mark
	return out, out != orig
}

var reOCRDate = regexp.MustCompile(`^([0-9OoIl]{1,2})\s*([A-Za-z\]\)\}\|\[!1]\s?[A-Za-z]{1,3}\s?[A-Za-z]{0,6})\.?\s*([0-9OoIl]{2}|[0-9OoIl]{4})?$`)

// ocrDateText is an OCR'd date ("01) an 24", "O6J an 24") as written
// ("01 Jan 24"), when its month can be read.
func ocrDateText(s string) (string, bool) {
	m := reOCRDate.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return s, false
	}
	mon := strings.ReplaceAll(m[2], " ", "")
	if strings.ContainsRune("])}|[!1", rune(mon[0])) {
		mon = "J" + mon[1:]
	}
	if monthOf(mon) == 0 {
		return s, false
	}
	day := ocrDigits.Replace(m[1])
	out := day + " " + mon
	if m[3] != "" {
		out += " " + ocrDigits.Replace(m[3])
	}
	return out, strings.Join(strings.Fields(s), " ") != out
}

var reOCRFullDate = regexp.MustCompile(`(?:^|[^0-9])([0-9]{1,2}\s*[A-Za-z\]\)\}\|\[]\s?[A-Za-z]{2,8}\.?\s*[0-9]{4})\b`)

// fullDates are the dates with a year in a line's text; OCR's may have
// lost their spaces ("8August 2025") or have a J misread.
func fullDates(text string, ocr bool) []dateCell {
	var out []dateCell
	for _, m := range reFullDate.FindAllString(text, -1) {
		if c, ok := splitDate(m); ok && c.fixed == ymd && !c.noYear {
			out = append(out, c)
		}
	}
	if ocr {
		for _, m := range reOCRFullDate.FindAllStringSubmatch(text, -1) {
			if t, ok := ocrDateText(m[1]); ok {
				if c, ok := splitDate(t); ok && c.fixed == ymd && !c.noYear {
					out = append(out, c)
				}
			}
		}
	}
	return out
}
