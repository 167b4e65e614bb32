package statements

import (
	"regexp"
	"strconv"
	"strings"
)

// The pieces of a statement line, for reading its table from positions
// (layout.go): dates, amounts and text, each with where it sits. A cell
// of the text layer may hold several ("05 JAN 06 JAN GRAB SINGAPORE
// 12.50" shown as one string), so a cell's leading dates and trailing
// amount are split off it, and their places estimated from their letters.

type tokKind int

const (
	tokText tokKind = iota
	tokDate
	tokAmount
)

type layoutTok struct {
	kind   tokKind
	x0, x1 float64
	s      string
	date   dateCell
	amt    amount
	inCell bool // split off a cell that held text as well
}

// Dates are read strictly here: the whole token is a date and nothing
// else, so that "05 JAN GRAB" is a date and a description, not a date.
var (
	reLDMonY  = regexp.MustCompile(`^\d{1,2}[ .\-/]?[A-Za-zéûäöÄÖÜ]{3,9}\.?(?:[ .\-/,]*(?:\d{2}|\d{4}))?$`)
	reLMonDY  = regexp.MustCompile(`^[A-Za-zéûäöÄÖÜ]{3,9}\.? ?\d{1,2}(?:st|nd|rd|th)?(?:,? \d{4})?$`)
	reLNum    = regexp.MustCompile(`^\d{1,2}[./-]\d{1,2}[./-](?:\d{2}|\d{4})$`)
	reLISO    = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	reLDotDM  = regexp.MustCompile(`^(\d{1,2})\.(\d{1,2})\.$`)
	reLSlash2 = regexp.MustCompile(`^(\d{1,2})/(\d{1,2})$`)
)

// layoutDate reads a token that is a date and only a date. Dates without
// a year are noYear; "05.01." is day first, "01/05" leaves the order open.
func layoutDate(s string) (dateCell, bool) {
	s = strings.TrimSpace(s)
	switch {
	case reLDotDM.MatchString(s):
		m := reLDotDM.FindStringSubmatch(s)
		d, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		return dateCell{y: 2000, a: mo, b: d, fixed: ymd, noYear: true}, validDate(2000, mo, d)
	case reLSlash2.MatchString(s):
		m := reLSlash2.FindStringSubmatch(s)
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		ok := a >= 1 && b >= 1 && (a <= 12 && b <= 31 || b <= 12 && a <= 31)
		return dateCell{y: 2000, a: a, b: b, sep: "/", noYear: true}, ok
	case reLDMonY.MatchString(s), reLMonDY.MatchString(s), reLNum.MatchString(s), reLISO.MatchString(s):
		return splitDate(s)
	}
	return dateCell{}, false
}

// layoutAmount reads a token that is a money amount with two decimals,
// with its marks: CR/DR, a sign before or after, and the S (Soll, a
// debit) or H (Haben, a credit) of German statements.
func layoutAmount(s string) (amount, bool) {
	s = strings.TrimSpace(s)
	mark := 0
	if n := len(s); n > 2 && s[n-2] == ' ' {
		switch s[n-1] {
		case 'S':
			mark, s = -1, s[:n-2]
		case 'H':
			mark, s = 1, s[:n-2]
		}
	}
	if strings.IndexAny(s, "0123456789") < 0 || strings.Count(s, " ") > 2 {
		return amount{}, false
	}
	a, err := readAmount(s, sepAuto)
	if err != nil || a.decimals != 2 {
		return amount{}, false
	}
	if mark != 0 {
		a.mark = mark
	}
	return a, true
}

// isAmountMark is a marker printed apart from its amount.
func isAmountMark(s string) (int, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "CR", "H", "+":
		return 1, true
	case "DR", "S", "-":
		return -1, true
	}
	return 0, false
}

// cellTokens splits a cell into its leading dates (two at most), its
// text and its trailing amount.
func cellTokens(c pdfCell) []layoutTok {
	if a, ok := layoutAmount(c.s); ok {
		return []layoutTok{{kind: tokAmount, x0: c.x0, x1: c.x1, s: c.s, amt: a}}
	}
	if d, ok := layoutDate(c.s); ok {
		return []layoutTok{{kind: tokDate, x0: c.x0, x1: c.x1, s: c.s, date: d}}
	}
	words := strings.Fields(c.s)
	if len(words) < 2 {
		return []layoutTok{{kind: tokText, x0: c.x0, x1: c.x1, s: c.s}}
	}
	// Each word's rune offset, to place a piece within the cell.
	offs := make([]int, len(words)+1)
	for i, w := range words {
		offs[i+1] = offs[i] + len([]rune(w)) + 1
	}
	total := float64(max(1, offs[len(words)]-1))
	at := func(off int) float64 { return c.x0 + (c.x1-c.x0)*float64(off)/total }
	var out []layoutTok
	start := 0
	for range 2 {
		found := false
		for w := min(3, len(words)-start); w >= 1; w-- {
			s := strings.Join(words[start:start+w], " ")
			if d, ok := layoutDate(s); ok {
				out = append(out, layoutTok{kind: tokDate, x0: at(offs[start]), x1: at(offs[start+w] - 1), s: s, date: d, inCell: true})
				start += w
				found = true
				break
			}
		}
		if !found || start >= len(words) {
			break
		}
	}
	end := len(words)
	var tail *layoutTok
	for w := min(2, end-start); w >= 1; w-- {
		s := strings.Join(words[end-w:], " ")
		if a, ok := layoutAmount(s); ok {
			tail = &layoutTok{kind: tokAmount, x0: at(offs[end-w]), x1: c.x1, s: s, amt: a, inCell: true}
			end -= w
			break
		}
	}
	if start < end {
		out = append(out, layoutTok{kind: tokText, x0: at(offs[start]), x1: at(offs[end] - 1), s: strings.Join(words[start:end], " ")})
	}
	if tail != nil {
		out = append(out, *tail)
	}
	return out
}

// lineTokens is a line's tokens, with markers and currency codes printed
// apart joined to their amounts.
func lineTokens(l pdfLine) []layoutTok {
	var toks []layoutTok
	for _, c := range l.cells {
		toks = append(toks, cellTokens(c)...)
	}
	var out []layoutTok
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if n := len(out); n > 0 && out[n-1].kind == tokAmount && t.kind == tokText && t.x0-out[n-1].x1 < 2*max(l.size, 4) {
			if m, ok := isAmountMark(t.s); ok {
				p := &out[n-1]
				if m < 0 && (t.s == "-" || t.s == "S" || strings.EqualFold(t.s, "DR")) {
					p.amt.mark = -1
				} else if m > 0 {
					p.amt.mark = 1
				}
				p.x1 = t.x1
				continue
			}
		}
		if t.kind == tokAmount && t.amt.ccy == "" {
			if n := len(out); n > 0 && out[n-1].kind == tokText && isCurrency(out[n-1].s) && t.x0-out[n-1].x1 < 2*max(l.size, 4) {
				t.amt.ccy = out[n-1].s
				t.inCell = true
			}
		}
		out = append(out, t)
	}
	return out
}
