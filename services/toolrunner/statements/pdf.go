package statements

import (
	"bytes"
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/ledongthuc/pdf"
)

// PDF statements with a text layer: the table is rebuilt from positioned
// text. A header line names the columns (date, details, paid out, paid
// in, amount, balance); each later line's cells fall in the column whose
// heading they sit under. A transaction ends at the line that holds its
// amount: lines before it without one continue its description, and a
// date printed only on a day's first row carries to the rows below.
// Balance brought/carried forward rows are left out.

// maxPages bounds the pages read.
const maxPages = 500

// pdfCell is text that sits together on a line.
type pdfCell struct {
	x0, x1 float64
	s      string
}

type pdfLine struct {
	page  int
	y     float64
	size  float64
	cells []pdfCell
}

func (l pdfLine) text() string {
	var parts []string
	for _, c := range l.cells {
		parts = append(parts, c.s)
	}
	return strings.Join(parts, " ")
}

// pdfLines reads every page's text as lines of cells.
func pdfLines(data []byte) ([]pdfLine, int, error) {
	r, err := func() (r *pdf.Reader, err error) {
		defer func() {
			if recover() != nil {
				err = unreadable("a damaged PDF")
			}
		}()
		return pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	}()
	if err != nil {
		if strings.Contains(err.Error(), "encrypt") || strings.Contains(err.Error(), "password") {
			return nil, 0, unreadable("the PDF is protected by a password")
		}
		return nil, 0, unreadable("a damaged PDF: %v", err)
	}
	pages := 0
	func() {
		defer func() { _ = recover() }()
		pages = r.NumPage()
	}()
	if pages > maxPages {
		return nil, pages, unreadable("a PDF of more than %d pages", maxPages)
	}
	var lines []pdfLine
	for i := 1; i <= pages; i++ {
		var p pdf.Page
		func() {
			defer func() { _ = recover() }()
			p = r.Page(i)
		}()
		if p.V.IsNull() {
			continue
		}
		runs, err := readPageText(p)
		if err == errTooComplex {
			return nil, pages, unreadable("a PDF page too complex to read")
		}
		lines = append(lines, groupLines(i, runs)...)
	}
	return lines, pages, nil
}

// groupLines puts runs on the same baseline into lines, and runs that
// touch into cells ("£209" ".06" is one; so is a heading written one
// letter at a time).
func groupLines(page int, runs []textRun) []pdfLine {
	sort.SliceStable(runs, func(a, b int) bool { return runs[a].y > runs[b].y })
	var lines []pdfLine
	for _, r := range runs {
		tol := max(1.5, r.size*0.3)
		if n := len(lines); n > 0 && lines[n-1].y-r.y <= tol {
			l := &lines[n-1]
			l.cells = append(l.cells, pdfCell{r.x0, r.x1, r.s})
			l.size = max(l.size, r.size)
			continue
		}
		lines = append(lines, pdfLine{page: page, y: r.y, size: r.size, cells: []pdfCell{{r.x0, r.x1, r.s}}})
	}
	for i := range lines {
		l := &lines[i]
		sort.SliceStable(l.cells, func(a, b int) bool { return l.cells[a].x0 < l.cells[b].x0 })
		var merged []pdfCell
		for _, c := range l.cells {
			if n := len(merged); n > 0 {
				m := &merged[n-1]
				gap := c.x0 - m.x1
				if gap < l.size*0.6 {
					sep := ""
					if gap > l.size*0.25 && len([]rune(strings.TrimSpace(c.s))) > 1 && len([]rune(strings.TrimSpace(m.s))) > 1 {
						sep = " "
					}
					if isNumberish(m.s) && (isNumberish(c.s) || isMarker(c.s)) {
						sep = ""
					}
					m.s += sep + c.s
					m.x1 = max(m.x1, c.x1)
					continue
				}
			}
			merged = append(merged, c)
		}
		for j := range merged {
			merged[j].s = strings.Join(strings.Fields(merged[j].s), " ")
		}
		l.cells = merged
	}
	return lines
}

func isNumberish(s string) bool {
	s = strings.TrimSpace(s)
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(unicode.IsDigit(r) || r == '.' || r == ',' || r == '£' || r == '€' || r == '$' || r == '-' || r == '(' || r == ')')
	}) < 0
}

func isMarker(s string) bool {
	s = strings.ToUpper(strings.TrimSpace(s))
	return s == "CR" || s == "DR" || s == "C" || s == "R" || s == "D" || s == "-"
}

// Column kinds.
const (
	colDate = iota + 1
	colDesc
	colOut
	colIn
	colAmount
	colBalance
	colOther
)

type pdfColumn struct {
	kind     int
	x0, x1   float64
	name     string
	dateRank int
}

func (c pdfColumn) center() float64 { return (c.x0 + c.x1) / 2 }

func squash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r == '(' || r == ')' || r == '£' || r == '€' || r == '$' || r == ':' {
			return -1
		}
		return unicode.ToLower(r)
	}, s)
}

var (
	pdfOutNames     = []string{"paidout", "moneyout", "withdrawals", "withdrawal", "debits", "debit", "payments", "out", "charges", "debitamount"}
	pdfInNames      = []string{"paidin", "moneyin", "deposits", "deposit", "credits", "credit", "in", "receipts", "creditamount"}
	pdfAmountNames  = []string{"amount", "transactionamount", "value", "betrag", "montant", "importe", "bedrag"}
	pdfBalanceNames = []string{"balance", "runningbalance", "saldo", "solde"}
	pdfDescNames    = []string{"details", "description", "transactiondetails", "paymenttypeanddetails", "particulars", "narrative", "transaction", "merchant", "payee", "reference", "beschreibung", "libellé", "concepto"}
)

func hasSquashed(s string, names []string) bool {
	for _, n := range names {
		if s == n || strings.HasPrefix(s, n) || strings.HasSuffix(s, n) {
			return true
		}
	}
	return false
}

// headerColumns reads a line as a table header: at least a date column
// and a money column.
func headerColumns(l pdfLine) ([]pdfColumn, bool) {
	var cols []pdfColumn
	dates, money := 0, 0
	for _, c := range l.cells {
		s := squash(c.s)
		if len(strings.Fields(c.s)) > 4 || len(s) > 30 {
			return nil, false // a sentence, not a heading
		}
		col := pdfColumn{x0: c.x0, x1: c.x1, name: c.s, kind: colOther}
		switch {
		case s == "":
			continue
		case strings.Contains(s, "date") || s == "datum" || s == "fecha" || strings.HasPrefix(s, "received") || strings.HasPrefix(s, "posted") || s == "day":
			col.kind, col.dateRank = colDate, dateRank(strings.ToLower(c.s))
			dates++
		case hasSquashed(s, pdfBalanceNames):
			col.kind = colBalance
			money++
		case hasSquashed(s, pdfOutNames) && !hasSquashed(s, pdfInNames[:4]):
			col.kind = colOut
			money++
		case hasSquashed(s, pdfInNames):
			col.kind = colIn
			money++
		case hasSquashed(s, pdfAmountNames):
			col.kind = colAmount
			money++
		case hasSquashed(s, pdfDescNames):
			col.kind = colDesc
		}
		if _, ok := splitDate(c.s); ok {
			return nil, false
		}
		if _, err := readAmount(c.s, sepAuto); err == nil {
			return nil, false
		}
		cols = append(cols, col)
	}
	return cols, dates > 0 && money > 0 && dates+money < len(cols)+1
}

// pdfBalanceLine: brought/carried forward, opening/closing balance, totals.
func pdfBalanceLine(text string) bool {
	s := squash(text)
	for _, w := range []string{"broughtforward", "carriedforward", "balancebroughtforward", "openingbalance", "closingbalance",
		"previousbalance", "newbalance", "balancefromprevious", "saldoanterior", "saldoinicial", "saldofinal", "startingbalance", "endingbalance", "totalpayments", "totaldebits", "totalcredits", "subtotal"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return balanceRow.MatchString(text)
}

var reCodeBesideNumber = regexp.MustCompile(`\b([A-Z]{3})\s?[0-9]|[0-9]\s?([A-Z]{3})\b`)

var reFullDate = regexp.MustCompile(`\b\d{1,2}\s+[A-Za-z]{3,9}\.?\s+\d{4}\b|\b\d{1,2}[./]\d{1,2}[./]\d{4}\b|\b\d{4}-\d{2}-\d{2}\b`)

func parsePDF(data []byte, opts Options) (Result, error) {
	lines, pages, err := pdfLines(data)
	if err != nil {
		return Result{}, err
	}
	chars := 0
	for _, l := range lines {
		chars += len(l.text())
	}
	if chars < 20 {
		return ocrPDF(data, pages, opts)
	}
	return tableFromLines(lines, "pdf", opts)
}

// tableFromLines rebuilds a statement's table from positioned lines (a
// PDF's text layer, or OCR's words).
func tableFromLines(lines []pdfLine, format string, opts Options) (Result, error) {
	// The statement's latest full date gives the year of dates written
	// without one ("14 Dec").
	var end dateCell
	for _, l := range lines {
		for _, m := range reFullDate.FindAllString(l.text(), -1) {
			if c, ok := splitDate(m); ok && c.fixed == ymd && !c.noYear {
				if c.y > end.y || (c.y == end.y && (c.a > end.a || (c.a == end.a && c.b > end.b))) {
					end = c
				}
			}
		}
	}
	b := newBuilder(format, strings.ToUpper(format), opts)
	b.fileCcy = pdfCurrency(lines)
	var cols []pdfColumn
	var header string
	headerPage := 0
	var desc []string
	var date dateCell
	haveDate := false
	crOnly := false
	type pending struct {
		date dateCell
		amt  amount
		kind int
		desc string
	}
	var found []pending
	balances := 0
	for i, l := range lines {
		hc, ok := headerColumns(l)
		if !ok && i > 0 && lines[i-1].page == l.page && lines[i-1].y-l.y < 2*max(l.size, lines[i-1].size) {
			// A header over two lines ("Amount" above "Received by us").
			two := l
			two.cells = append(append([]pdfCell{}, lines[i-1].cells...), l.cells...)
			sort.SliceStable(two.cells, func(a, b int) bool { return two.cells[a].x0 < two.cells[b].x0 })
			hc, ok = headerColumns(two)
		}
		if ok {
			cols, headerPage, desc = hc, l.page, nil
			if header == "" {
				var names []string
				for _, c := range hc {
					names = append(names, c.name)
				}
				header = strings.Join(names, " | ")
			}
			continue
		}
		if cols == nil || l.page != headerPage && l.page < headerPage {
			continue
		}
		if l.page != headerPage {
			// A page without its own header keeps the last one's columns.
			headerPage = l.page
			desc = nil
		}
		if pdfBalanceLine(l.text()) {
			balances++
			desc = nil
			continue
		}
		var lineDesc []string
		var amts []struct {
			a    amount
			kind int
		}
		var lineDate *dateCell
		bestRank := -1
		for _, c := range l.cells {
			col := nearestColumn(cols, c)
			if a, err := readAmount(c.s, sepAuto); err == nil && a.decimals > 0 && (col.kind == colOut || col.kind == colIn || col.kind == colAmount || col.kind == colBalance) {
				amts = append(amts, struct {
					a    amount
					kind int
				}{a, col.kind})
				continue
			}
			if d, ok := splitDate(c.s); ok && col.kind == colDate {
				if col.dateRank > bestRank {
					dd := d
					lineDate, bestRank = &dd, col.dateRank
				}
				continue
			}
			if col.kind == colDesc || col.kind == colOther || col.kind == colDate {
				if s := strings.TrimSpace(strings.TrimPrefix(c.s, ")))")); s != "" && s != "." {
					lineDesc = append(lineDesc, s)
				}
			}
		}
		if lineDate != nil {
			date, haveDate = *lineDate, true
			if len(amts) == 0 && len(desc) > 0 {
				desc = nil // a new day starts a new transaction
			}
		}
		desc = append(desc, lineDesc...)
		var txAmt *amount
		kind := 0
		for i := range amts {
			if amts[i].kind != colBalance {
				txAmt, kind = &amts[i].a, amts[i].kind
				break
			}
		}
		if txAmt == nil {
			if len(amts) > 0 {
				desc = nil // a balance alone ends what came before
			}
			continue
		}
		if !haveDate {
			desc = nil
			continue
		}
		found = append(found, pending{date: date, amt: *txAmt, kind: kind, desc: strings.Join(desc, " ")})
		desc = nil
		if kind == colAmount && txAmt.mark > 0 {
			crOnly = true
		}
	}
	for _, p := range found {
		if kind := p.kind; kind == colAmount && p.amt.mark < 0 {
			crOnly = false
		}
	}
	if len(found) == 0 {
		if cols == nil {
			return Result{}, unreadable("a PDF without a table of transactions (no header naming a date and an amount column)")
		}
		return Result{}, unreadable("a PDF whose transaction table is empty")
	}
	b.res.Layout = strings.ToUpper(format) + " table: " + header
	if balances > 0 {
		b.res.Layout += ", " + countOf(balances, "balance row") + " left out"
	}
	if crOnly {
		b.res.Layout += ", credits marked CR"
	}
	for _, p := range found {
		v := p.amt.value()
		switch p.kind {
		case colOut:
			v.Abs(v)
			v.Neg(v)
		case colIn:
			v.Abs(v)
		case colAmount:
			if crOnly && p.amt.mark == 0 && !p.amt.signed {
				v.Neg(v)
			}
		}
		d := p.date
		if d.noYear {
			d.y = end.y
			if end.y == 0 {
				b.res.Uncertain = append(b.res.Uncertain, "the statement's year could not be found")
				d.y = 2000
			} else if d.a > end.a || (d.a == end.a && d.b > end.b+7) {
				d.y--
			}
		}
		if err := b.add(rawTxn{date: d, amt: new(big.Rat).Set(v), ccy: p.amt.ccy, desc: p.desc}); err != nil {
			return Result{}, err
		}
	}
	return b.finish()
}

// nearestColumn is the column a cell sits under: the one its extent
// overlaps most, else the nearest by centre.
func nearestColumn(cols []pdfColumn, c pdfCell) pdfColumn {
	best, bestD := pdfColumn{kind: colOther}, 1e9
	center := (c.x0 + c.x1) / 2
	for _, col := range cols {
		d := abs64(col.center() - center)
		if isNumberish(c.s) || strings.HasSuffix(strings.ToUpper(c.s), "CR") {
			// Numbers are aligned right under their heading.
			d = min(d, abs64(col.x1-c.x1))
		} else {
			d = min(d, abs64(col.x0-c.x0))
		}
		if d < bestD {
			best, bestD = col, d
		}
	}
	return best
}

func abs64(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// pdfCurrency: the one currency the statement's text names, by code or an
// unambiguous symbol.
func pdfCurrency(lines []pdfLine) string {
	counts := map[string]int{}
	for _, l := range lines {
		t := l.text()
		for _, s := range symbols {
			if strings.Contains(t, s.sym) && len(s.sym) < 3 {
				counts[s.ccy] += strings.Count(t, s.sym)
			}
		}
		for _, m := range reCodeBesideNumber.FindAllStringSubmatch(t, -1) {
			if w := m[1] + m[2]; isCurrency(w) {
				counts[w]++
			}
		}
	}
	best, n := "", 0
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if counts[k] > n {
			best, n = k, counts[k]
		}
	}
	return best
}
