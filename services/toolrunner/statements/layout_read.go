package statements

import (
	"math/big"
	"regexp"
	"slices"
	"strings"
)

// layoutResult is a statement read from its layout, and whether its
// balances were there to check it.
type layoutResult struct {
	res     Result
	checked bool
	flagged int // transactions that do not add up to the balances
}

var reCardWords = regexp.MustCompile(`(?i)credit\s*card|card\s*statement|minimum\s*(?:payment|amount)|credit\s*limit|total\s*amount\s*due|payment\s*due`)

// layoutFromLines reads a statement's table from the positions of its
// dates and amounts (layout.go).
func layoutFromLines(lines []pdfLine, opts Options) (layoutResult, error) {
	t := &layoutTable{docCcy: layoutCurrency(lines)}
	for _, l := range lines {
		ll := layoutLine{page: l.page, y: l.y, size: l.size, toks: lineTokens(l), text: l.text()}
		t.lines = append(t.lines, ll)
	}
	if !t.findColumns() {
		return layoutResult{}, unreadable("a PDF without a table of transactions (no column of dates and amounts)")
	}
	t.nameColumns()
	if !t.assignRoles() {
		return layoutResult{}, unreadable("a PDF without a table of transactions (no column of amounts)")
	}
	// Where a dated line carries its amount, text lines below a row
	// continue it; where some dated lines have none (the amount comes on
	// the row's last line), a row ends at its amount.
	dated, withAmt := 0, 0
	for _, l := range t.lines {
		if !t.datedAt(l) || lineClass(l.text) != lineRow {
			continue
		}
		dated++
		in, _ := t.amountsIn(l, false)
		for c := range in {
			if t.amtCols[c].kind != colBalance {
				withAmt++
				break
			}
		}
	}
	t.amountOn = 10*withAmt >= 9*dated
	for _, l := range t.lines {
		if reCardWords.MatchString(l.text) {
			t.card = true
		}
	}
	rows, anchors, strays := t.buildRows()
	for _, r := range rows {
		if r.kind == colAmount && r.amt.mark > 0 {
			t.card = true
		}
	}
	if len(rows) == 0 {
		return layoutResult{}, unreadable("a PDF whose transaction table is empty")
	}
	anchors = summaryClosings(anchors, rows)
	t.signRows(rows, anchors)
	rows, anchors, found := t.recoverRows(rows, anchors, strays)

	b := newBuilder("pdf", "PDF", opts)
	b.fileCcy = t.docCcy
	if b.fileCcy == "" {
		var pre [][]string
		for _, l := range lines {
			pre = append(pre, []string{l.text()})
		}
		b.inferredCcy, b.inferredFrom = inferCurrency(nil, pre)
	}
	for _, r := range rows {
		b.dollar = b.dollar || r.amt.dollar
	}
	b.res.Layout = "PDF layout: " + t.describe()
	if found > 0 {
		b.warn("%s printed off their column found from the balances printed around them", countOf(found, "transaction"))
	}
	vals := make([]*big.Rat, len(rows))
	for i, r := range rows {
		vals[i] = r.val
	}
	review := make([]string, len(rows))
	checked := false
	secs := sections(anchors, len(rows))
	for _, s := range secs {
		var as []balanceAnchor
		for _, a := range s.anchors {
			as = append(as, balanceAnchor{after: a.after - s.from, v: a.v})
		}
		sm := summary{}
		if len(secs) == 1 && len(anchors) == 0 {
			sm = readSummary(lines, false)
		}
		rc := reconcile(vals[s.from:s.to], as, sm, false)
		copy(review[s.from:s.to], rc.review)
		b.res.Warnings = append(b.res.Warnings, rc.warnings...)
		b.res.Uncertain = append(b.res.Uncertain, rc.notes...)
		checked = checked || rc.checked
	}
	end := periodEnd(lines, t)
	noYear := false
	order := t.noYearOrder(rows, opts)
	flagged := 0
	for i, r := range rows {
		d := r.date
		if d.noYear {
			if d.fixed != ymd {
				if order == dmy {
					d.a, d.b = d.b, d.a
				}
				d.fixed = ymd
			}
			d.y = end.y
			if end.y == 0 {
				noYear = true
				d.y = 2000
			} else if d.a > end.a || (d.a == end.a && d.b > end.b+7) {
				d.y--
			}
		}
		if review[i] != "" {
			flagged++
		}
		ccy := r.amt.ccy
		if ccy == t.docCcy {
			ccy = ""
		}
		if err := b.add(rawTxn{date: d, amt: vals[i], ccy: ccy, desc: strings.Join(r.desc, " "), review: review[i]}); err != nil {
			return layoutResult{}, err
		}
	}
	if noYear {
		b.res.Uncertain = append(b.res.Uncertain, "the statement's year could not be found")
	}
	res, err := b.finish()
	if err != nil {
		return layoutResult{}, err
	}
	return layoutResult{res: res, checked: checked, flagged: flagged}, nil
}

// reNamedCurrency is a currency named as such: "Currency GBP",
// "Währung EUR", "All amounts in SGD".
var reNamedCurrency = regexp.MustCompile(`(?i)(?:currency|währung|devise|moneda|amounts\s+in|amounts\s+are\s+in)\W{0,3}([A-Z]{3})\b`)

// layoutCurrency is the statement's currency: the one its figures carry
// (pdfCurrency), else one it names as its currency.
func layoutCurrency(lines []pdfLine) string {
	if c := pdfCurrency(lines); c != "" {
		return c
	}
	found := ""
	for _, l := range lines {
		for _, m := range reNamedCurrency.FindAllStringSubmatch(l.text(), -1) {
			if !isCurrency(m[1]) {
				continue
			}
			if found != "" && found != m[1] {
				return ""
			}
			found = m[1]
		}
	}
	return found
}

// describe names the columns found, left to right.
func (t *layoutTable) describe() string {
	parts := []string{"date"}
	if len(t.dateCols) > 1 {
		parts = []string{"dates"}
	}
	parts = append(parts, "description")
	for _, c := range t.amtCols {
		switch c.kind {
		case colOut:
			parts = append(parts, "money out")
		case colIn:
			parts = append(parts, "money in")
		case colAmount:
			parts = append(parts, "amount")
		case colBalance:
			parts = append(parts, "balance")
		}
	}
	s := strings.Join(parts, " | ") + " (columns found from where the figures sit)"
	if t.card {
		s += ", a card statement"
	}
	return s
}

// noYearOrder decides the day/month order of dates written as "01/05"
// without a year: a field over 12 settles it, else the caller's order,
// else month first where amounts are in dollars.
func (t *layoutTable) noYearOrder(rows []layoutRow, opts Options) dateOrder {
	dayFirst, monthFirst := false, false
	for _, r := range rows {
		if r.date.noYear && r.date.fixed != ymd {
			dayFirst = dayFirst || r.date.a > 12
			monthFirst = monthFirst || r.date.b > 12
		}
	}
	switch {
	case dayFirst && !monthFirst:
		return dmy
	case monthFirst && !dayFirst:
		return mdy
	}
	if o := ParseDateOrder(opts.DateOrder); o != 0 {
		return o
	}
	for _, r := range rows {
		if r.amt.dollar {
			return mdy
		}
	}
	return dmy
}

// reLongDate finds full dates in running text, as statement periods
// print them: "January 31, 2024", "31 Jan 2024", "31.01.2024", "2024-01-31".
var reLongDate = regexp.MustCompile(`(?i)\b[A-Za-z]{3,9}\.? \d{1,2},? \d{4}\b|\b\d{1,2}\.? [A-Za-zäé]{3,9}\.? \d{4}\b|\b\d{1,2}[./]\d{1,2}[./]\d{4}\b|\b\d{4}-\d{2}-\d{2}\b`)

// periodEnd is the latest full date the statement prints (its period's
// end, or its date), which gives dates printed without a year theirs.
func periodEnd(lines []pdfLine, t *layoutTable) dateCell {
	var end dateCell
	for _, l := range lines {
		for _, m := range reLongDate.FindAllString(l.text(), -1) {
			d, ok := splitDate(strings.ReplaceAll(m, ". ", " "))
			if !ok || d.noYear {
				continue
			}
			if d.fixed != ymd {
				if d.sep == "." || d.a > 12 {
					d.a, d.b = d.b, d.a
				} else if d.b <= 12 && !t.dollarDoc() {
					d.a, d.b = d.b, d.a
				}
			}
			if d.y > end.y || d.y == end.y && (d.a > end.a || d.a == end.a && d.b > end.b) {
				end = d
			}
		}
	}
	return end
}

func (t *layoutTable) dollarDoc() bool {
	return t.docCcy == "USD" || t.docCcy == "" && slices.ContainsFunc(t.lines, func(l layoutLine) bool { return strings.Contains(l.text, "$") })
}

// section is the rows [from, to) between one opening balance and the next.
type section struct {
	from, to int
	anchors  []layoutAnchor
}

// sections splits the rows where an opening balance starts an account's
// or a card's own run of balances. A closing balance printed above the
// rows (a summary box) is moved after them.
func sections(anchors []layoutAnchor, n int) []section {
	var out []section
	cur := section{}
	for _, a := range anchors {
		if a.opening && len(cur.anchors) > 0 && a.after > cur.from {
			cur.to = a.after
			out = append(out, cur)
			cur = section{from: a.after}
		}
		cur.anchors = append(cur.anchors, a)
	}
	cur.to = n
	out = append(out, cur)
	return out
}

// summaryClosings moves a closing balance printed above its section's
// rows (in a summary box) to after them, where it checks them.
func summaryClosings(anchors []layoutAnchor, rows []layoutRow) []layoutAnchor {
	var out []layoutAnchor
	for _, s := range sections(anchors, len(rows)) {
		var early, rest []layoutAnchor
		for _, a := range s.anchors {
			if !a.opening && a.after == s.from && s.to > s.from {
				early = append(early, a)
			} else {
				rest = append(rest, a)
			}
		}
		if len(early) > 0 && !slices.ContainsFunc(rest, func(a layoutAnchor) bool { return a.after == s.to && !a.opening }) {
			for _, a := range early {
				a.after, a.line = s.to, rows[s.to-1].line
				rest = append(rest, a)
			}
		} else {
			rest = s.anchors
		}
		out = append(out, rest...)
	}
	return out
}

// recoverRows looks again where the balances do not chain: an amount
// printed between the two balances but not read as a row (off its
// column, on a line taken for text) that makes them chain is a row.
func (t *layoutTable) recoverRows(rows []layoutRow, anchors []layoutAnchor, strays map[int][]layoutTok) ([]layoutRow, []layoutAnchor, int) {
	found := 0
	sign := t.balanceSign(rows, anchors)
	for k := 0; k+1 < len(anchors); k++ {
		a, b := anchors[k], anchors[k+1]
		if b.opening || b.after < a.after {
			continue
		}
		want := new(big.Rat).Sub(b.v, a.v)
		if sign < 0 {
			want.Neg(want)
		}
		for _, r := range rows[a.after:b.after] {
			want.Sub(want, r.val)
		}
		if want.Sign() == 0 {
			continue
		}
		var cands []struct {
			line int
			tok  layoutTok
		}
		for i := a.line + 1; i <= b.line && len(cands) < 40; i++ {
			for _, s := range strays[i] {
				cands = append(cands, struct {
					line int
					tok  layoutTok
				}{i, s})
			}
		}
		var pick []int
		var vals []*big.Rat
		abs := func(i int) *big.Rat { return new(big.Rat).Abs(cands[i].tok.amt.value()) }
		for i := range cands {
			if abs(i).Cmp(new(big.Rat).Abs(want)) == 0 {
				pick, vals = []int{i}, []*big.Rat{new(big.Rat).Set(want)}
				break
			}
		}
		for i := 0; pick == nil && i < len(cands); i++ {
			for j := i + 1; pick == nil && j < len(cands); j++ {
				for _, si := range []int{1, -1} {
					for _, sj := range []int{1, -1} {
						vi, vj := abs(i), abs(j)
						if si < 0 {
							vi.Neg(vi)
						}
						if sj < 0 {
							vj.Neg(vj)
						}
						if pick == nil && new(big.Rat).Add(vi, vj).Cmp(want) == 0 {
							pick, vals = []int{i, j}, []*big.Rat{vi, vj}
						}
					}
				}
			}
		}
		for n, ci := range pick {
			c := cands[ci]
			delete(strays, c.line)
			pos := a.after
			for pos < b.after && rows[pos].line < c.line {
				pos++
			}
			r := layoutRow{line: c.line, amt: c.tok.amt, kind: colAmount, recovered: true, val: vals[n]}
			if d, ok := t.lineDate(t.lines[c.line]); ok && t.datedAt(t.lines[c.line]) {
				r.date = d
			} else if pos > 0 {
				r.date = rows[pos-1].date
			} else if pos < len(rows) {
				r.date = rows[pos].date
			}
			for _, s := range lineText(t.lines[c.line], t) {
				if s != c.tok.s {
					r.desc = append(r.desc, s)
				}
			}
			rows = slices.Insert(rows, pos, r)
			for j := k + 1; j < len(anchors); j++ {
				anchors[j].after++
			}
			b.after++
			found++
		}
	}
	return rows, anchors, found
}

// balanceSign is +1 where the balances are the account holder's money,
// and -1 where they are what is owed on a card: the one more steps
// between two balances agree with.
func (t *layoutTable) balanceSign(rows []layoutRow, anchors []layoutAnchor) int {
	plus, minus := 0, 0
	for k := 0; k+1 < len(anchors); k++ {
		a, b := anchors[k], anchors[k+1]
		if b.opening || b.after <= a.after {
			continue
		}
		d := new(big.Rat).Sub(b.v, a.v)
		s := new(big.Rat)
		for _, r := range rows[a.after:b.after] {
			s.Add(s, r.val)
		}
		if d.Cmp(s) == 0 {
			plus++
		}
		if d.Cmp(new(big.Rat).Neg(s)) == 0 {
			minus++
		}
	}
	if minus > plus {
		return -1
	}
	return 1
}
