package statements

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A receipt's date: of all the dates printed, the one beside a date
// keyword ("Datum", "Date", "Fecha", "Factuurdatum", "日付"), else the one
// printed most often (a till prints it on the slip and on the card
// receipt), never one that says when something is due or expires.

var (
	reRcptISO    = regexp.MustCompile(`(?:^|[^\d])(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?:$|[^\d])`)
	reRcptNumDMY = regexp.MustCompile(`(?:^|[^\d.,/-])(\d{1,2})([./-])(\d{1,2})[./-](\d{4}|\d{2})(?:$|[^\d])`)
	// 29 maart 2014, 29maart2014, 7. März 2025, 12 févr. 2024, 5 de marzo de 2024
	reRcptDayMonth = regexp.MustCompile(`(?i)(?:^|[^\d])(\d{1,2})(?:er)?\.?\s*(?:de\s+)?(\p{L}{3,10})\.?,?\s*(?:de\s+)?(\d{4})(?:$|[^\d])`)
	// March 29, 2014; Mar 29 2014; Oct. 5th, 2024
	reRcptMonthDay = regexp.MustCompile(`(?i)(?:^|[^\p{L}])(\p{L}{3,10})\.?\s*(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})(?:$|[^\d])`)
	// 2026年05月03日, and with one of 月 and 日 misread as another kanji
	// (2026年05朋03日), which OCR does to thin strokes.
	reRcptJapan = regexp.MustCompile(`(\d{4})\s?年\s?(\d{1,2})\s?(?:月\s?(\d{1,2})\s?\p{Han}|\p{Han}\s?(\d{1,2})\s?日)`)
	reRcptEra   = regexp.MustCompile(`(令和|平成|R|H)\s?(\d{1,2}|元)[年./](\d{1,2})[月./](\d{1,2})日?`)
	// A date cut off: a day and month with no year, or a year missing
	// its digits, where a date is expected.
	// A time of day printed beside a date: a till stamps the moment of
	// the sale, never a card's expiry or a due date.
	reRcptTimeAfter = regexp.MustCompile(`^[\s,;]*(?:\p{L}{0,5}\.?:?\s*)?\(?\p{L}?\)?\s*\d{1,2}[:h時]\s?\d{2}`)
	reRcptCutDate   = regexp.MustCompile(`(?:^|[^\d])(\d{1,2})[./-](\d{1,2})(?:[./-]\d{0,1}|[./-]\d{3})?\s*$|(?:^|[^\d])(\d{1,2})[./-](\d{1,2})[./-]?$`)
)

var extraMonths = map[string]int{"mär": 3, "maer": 3, "mrz": 3, "déc": 12, "fév": 2, "fev": 2, "févr": 2, "juil": 7, "sept": 9,
	"avr": 4, "janv": 1, "jän": 1, "jan": 1, "okt": 10, "dez": 12, "mei": 5, "mrt": 3, "ago": 8, "dic": 12, "ene": 1, "abr": 4,
	"juillet": 7, "août": 8, "aout": 8, "décembre": 12, "février": 2}

func monthNamed(s string) int {
	s = strings.ToLower(s)
	if m := monthOf(s); m > 0 {
		return m
	}
	return extraMonths[s]
}

var (
	dateKeyWords = []string{"datum", "date", "fecha", "factuurdatum", "rechnungsdatum", "belegdatum", "kaufdatum", "invoice date",
		"orderdatum", "bestelldatum", "date de facture", "fecha de emision", "日付", "発行日", "le", "dated"}
	notDateWords = []string{"due", "fallig", "faellig", "vervaldatum", "echeance", "vencimiento", "valid", "gultig", "mhd",
		"best", "expires", "exp", "expir", "expiry", "valable", "valido", "validez", "expiration", "caducidad", "caduca", "vence", "verloopt", "ablauf", "until", "bis", "geldig", "tot", "期限", "lieferdatum", "leverdatum", "birth",
		"geburtsdatum", "retour", "return", "umtausch", "ruckgabe", "op", "betaald", "paid", "inicio de actividades", "actividades"}
)

type rdate struct {
	y, a, b int    // a and b are month and day once fixed
	timed   bool   // a time of day follows it
	end     int    // where it ends in its line's text
	fixed   bool   // the form settles day and month
	sep     string // "/", "." or "-" for numeric dates
	line    int
	score   int
}

// date decides the receipt's date and notes what is unsure in notes.
func (rd *receiptReader) date(ccy string, notes *[]string) string {
	var ds []rdate
	cut := false
	for i, l := range rd.lines {
		found := rd.datesIn(l.text)
		score := 0
		switch {
		case hasAny(l.words, notDateWords, false):
			score = -5
		case hasAny(l.words, dateKeyWords, false):
			score = 3
		}
		for _, d := range found {
			d.line, d.score = i, score
			// A date stamped with the time of the sale outranks one
			// beside a date keyword, which OCR may have read off a
			// card's expiry ("Date d'expiration" as "Date d'exdtrati%").
			if d.timed && score >= 0 {
				d.score = max(d.score+2, 4)
			}
			ds = append(ds, d)
		}
		if len(found) == 0 && hasAny(l.words, dateKeyWords, false) && reRcptCutDate.MatchString(l.text) {
			cut = true
		}
	}
	if len(ds) == 0 {
		if cut {
			*notes = append(*notes, "the date is cut off; check it")
		} else {
			*notes = append(*notes, "no date found")
		}
		return ""
	}
	// Day/month order for dates that leave it open: a day over 12 in
	// any of them, else the person's order, else the country's custom
	// (dollars and English: month first).
	order, settled := dmy, false
	for _, d := range ds {
		if d.fixed {
			continue
		}
		if d.a > 12 {
			order, settled = dmy, true
		}
		if d.b > 12 {
			order, settled = mdy, true
		}
	}
	if !settled {
		switch o := ParseDateOrder(rd.opts.DateOrder); {
		case strings.EqualFold(strings.TrimSpace(rd.opts.DateOrder), "ymd"):
		case o == mdy || o == dmy:
			order = o
		case ccy == "USD" || ccy == "" && rd.lang == "en":
			order = mdy
		}
	}
	// The same date printed twice counts for it.
	count := map[string]int{}
	value := func(d rdate) (string, bool) {
		m, day := d.a, d.b
		if !d.fixed && order == dmy {
			m, day = d.b, d.a
		}
		if !validDate(d.y, m, day) {
			return "", false
		}
		return fmt.Sprintf("%04d-%02d-%02d", d.y, m, day), true
	}
	for _, d := range ds {
		if s, ok := value(d); ok {
			count[s]++
		}
	}
	best, bestScore, bestDate := -1, 0, rdate{}
	for i, d := range ds {
		s, ok := value(d)
		if !ok {
			continue
		}
		sc := d.score*10 + count[s]
		if best < 0 || sc > bestScore {
			best, bestScore, bestDate = i, sc, d
		}
	}
	if best < 0 || ds[best].score < 0 {
		*notes = append(*notes, "no purchase date found (only dates that say when something is due or expires)")
		return ""
	}
	s, _ := value(bestDate)
	if !bestDate.fixed && !settled && bestDate.a != bestDate.b && bestDate.a <= 12 && bestDate.b <= 12 {
		if rd.opts.DateOrder == "" && ccy != "USD" {
			*notes = append(*notes, fmt.Sprintf("the date could be read either way round; read as %s (%s)", order, s))
		}
	}
	if y, _ := strconv.Atoi(s[:4]); y > time.Now().Year()+1 {
		*notes = append(*notes, "the date is in the future; check it")
	}
	return s
}

// datesIn finds the dates in one line's text.
func (rd *receiptReader) datesIn(t string) []rdate {
	var out []rdate
	used := make([]bool, len(t)+1)
	mark := func(a, b int) bool {
		for i := a; i < b; i++ {
			if used[i] {
				return false
			}
		}
		for i := a; i < b; i++ {
			used[i] = true
		}
		return true
	}
	for _, m := range reRcptJapan.FindAllStringSubmatchIndex(t, -1) {
		y, _ := strconv.Atoi(t[m[2]:m[3]])
		mo, _ := strconv.Atoi(t[m[4]:m[5]])
		day := m[6:8]
		if day[0] < 0 {
			day = m[8:10]
		}
		d, _ := strconv.Atoi(t[day[0]:day[1]])
		if validDate(y, mo, d) && mark(m[0], m[1]) {
			out = append(out, rdate{y: y, a: mo, b: d, fixed: true, end: m[1]})
		}
	}
	for _, m := range reRcptEra.FindAllStringSubmatchIndex(t, -1) {
		era, n := t[m[2]:m[3]], t[m[4]:m[5]]
		y := 1
		if n != "元" {
			y, _ = strconv.Atoi(n)
		}
		if era == "令和" || era == "R" {
			y += 2018
		} else {
			y += 1988
		}
		mo, _ := strconv.Atoi(t[m[6]:m[7]])
		d, _ := strconv.Atoi(t[m[8]:m[9]])
		if validDate(y, mo, d) && mark(m[0], m[1]) {
			out = append(out, rdate{y: y, a: mo, b: d, fixed: true, end: m[1]})
		}
	}
	for _, m := range reRcptISO.FindAllStringSubmatchIndex(t, -1) {
		y, _ := strconv.Atoi(t[m[2]:m[3]])
		mo, _ := strconv.Atoi(t[m[4]:m[5]])
		d, _ := strconv.Atoi(t[m[6]:m[7]])
		if validDate(y, mo, d) && mark(m[2], m[7]) {
			out = append(out, rdate{y: y, a: mo, b: d, fixed: true, end: m[7]})
		}
	}
	for _, m := range reRcptNumDMY.FindAllStringSubmatchIndex(t, -1) {
		a, _ := strconv.Atoi(t[m[2]:m[3]])
		b, _ := strconv.Atoi(t[m[6]:m[7]])
		y, ok := fullYear(t[m[8]:m[9]])
		if !ok || a < 1 || b < 1 || a > 31 || b > 31 || (a > 12 && b > 12) || y < 1990 {
			continue
		}
		if !mark(m[2], m[9]) {
			continue
		}
		d := rdate{y: y, a: a, b: b, sep: t[m[4]:m[5]], end: m[9]}
		if d.sep == "." {
			// Day first wherever dates are written with points.
			d.a, d.b, d.fixed = b, a, true
		}
		out = append(out, d)
	}
	for _, m := range reRcptDayMonth.FindAllStringSubmatchIndex(t, -1) {
		d, _ := strconv.Atoi(t[m[2]:m[3]])
		mo := monthNamed(t[m[4]:m[5]])
		y, _ := strconv.Atoi(t[m[6]:m[7]])
		if mo > 0 && validDate(y, mo, d) && mark(m[2], m[7]) {
			out = append(out, rdate{y: y, a: mo, b: d, fixed: true, end: m[7]})
		}
	}
	for _, m := range reRcptMonthDay.FindAllStringSubmatchIndex(t, -1) {
		mo := monthNamed(t[m[2]:m[3]])
		d, _ := strconv.Atoi(t[m[4]:m[5]])
		y, _ := strconv.Atoi(t[m[6]:m[7]])
		if mo > 0 && validDate(y, mo, d) && mark(m[2], m[7]) {
			out = append(out, rdate{y: y, a: mo, b: d, fixed: true, end: m[7]})
		}
		if len(out) > 20 {
			break
		}
	}
	for i := range out {
		out[i].timed = reRcptTimeAfter.MatchString(t[out[i].end:])
	}
	return out
}
