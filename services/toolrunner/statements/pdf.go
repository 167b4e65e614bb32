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
	// A PDF "encrypted" with 40-bit RC4 and no password (e-mailed
	// receipts) is opened as any reader opens it: the library keys it
	// wrongly, so it is decrypted here first.
	data = decryptWeakRC4(data)
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
// and a money column. fuzzy (for OCR) takes a heading that is a letter or
// two off a known one.
func headerColumns(l pdfLine, fuzzy bool) ([]pdfColumn, bool) {
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
		case fuzzy:
			switch col.kind = fuzzyHeading(s); col.kind {
			case colDate:
				col.dateRank = dateRank(strings.ToLower(c.s))
				dates++
			case colBalance, colOut, colIn, colAmount:
				money++
			}
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
	return readPDFTable(lines, opts)
}

// readPDFTable reads the table by its header (tableFromLines) and, where
// that finds no table or one its balances do not bear out, by where its
// dates and amounts sit (layoutFromLines); the layout's reading is taken
// when it adds up better.
func readPDFTable(lines []pdfLine, opts Options) (Result, error) {
	res, checked, err := readTable(lines, "pdf", opts)
	hflag := flaggedRows(res)
	if err == nil && checked && hflag == 0 {
		return res, nil
	}
	lr, lerr := layoutFromLines(lines, opts)
	switch {
	case lerr != nil:
		return res, err
	case err != nil, lr.checked && lr.flagged < hflag, !checked && lr.checked && lr.flagged == 0:
		return lr.res, nil
	}
	return res, nil
}

// flaggedRows counts the transactions the balances or totals did not
// bear out.
func flaggedRows(r Result) int {
	n := 0
	for _, tx := range r.Transactions {
		if strings.Contains(tx.ReviewReason, "balance") || strings.Contains(tx.ReviewReason, "totals") {
			n++
		}
	}
	return n
}

// tableFromLines rebuilds a statement's table from positioned lines (a
// PDF's text layer, or OCR's words).
func tableFromLines(lines []pdfLine, format string, opts Options) (Result, error) {
	r, _, err := readTable(lines, format, opts)
	return r, err
}

// readTable is tableFromLines, and whether balances or totals were there
// to check the table against.
func readTable(lines []pdfLine, format string, opts Options) (Result, bool, error) {
	// The statement's latest full date gives the year of dates written
	// without one ("14 Dec").
	ocr := format == "ocr"
	var end dateCell
	for _, l := range lines {
		for _, c := range fullDates(l.text(), ocr) {
			if c.y > end.y || (c.y == end.y && (c.a > end.a || (c.a == end.a && c.b > end.b))) {
				end = c
			}
		}
	}
	// The header of each line that is one, and the pages that have one:
	// on those, what comes above the header is not the table.
	headers := make([][]pdfColumn, len(lines))
	headerOn := map[int]int{} // page -> index of its first header line
	for i, l := range lines {
		hc, ok := headerColumns(l, ocr)
		if !ok && i > 0 && lines[i-1].page == l.page && lines[i-1].y-l.y < 2*max(l.size, lines[i-1].size) {
			// A header over two lines ("Amount" above "Received by us").
			two := l
			two.cells = append(append([]pdfCell{}, lines[i-1].cells...), l.cells...)
			sort.SliceStable(two.cells, func(a, b int) bool { return two.cells[a].x0 < two.cells[b].x0 })
			hc, ok = headerColumns(two, ocr)
		}
		if ok {
			headers[i] = hc
			if _, seen := headerOn[l.page]; !seen {
				headerOn[l.page] = i
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
	var anchors []balanceAnchor
	balances := 0
	pageFound := 0 // transactions found on the current page
	fixed := 0     // OCR'd amounts and dates put right
	for i, l := range lines {
		hc, ok := headers[i], headers[i] != nil
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
		if h, ok := headerOn[l.page]; ok && i < h {
			continue // above this page's own header
		}
		if l.page != headerPage {
			// A page without its own header keeps the last one's columns.
			headerPage = l.page
			desc = nil
			pageFound = 0
		}
		if pdfBalanceLine(l.text()) {
			balances++
			desc = nil
			for _, c := range l.cells {
				if col := nearestColumn(cols, c); col.kind == colBalance {
					if a, err := readAmount(c.s, sepAuto); err == nil && a.decimals > 0 {
						anchors = append(anchors, balanceAnchor{after: len(found), v: a.signedValue()})
					}
				}
			}
			continue
		}
		var lineDesc []string
		var amts []struct {
			a    amount
			kind int
		}
		var lineDate *dateCell
		bestRank := -1
		var lineBal *big.Rat
		for _, c := range mergeDateCells(cols, l.cells) {
			col := nearestColumn(cols, c)
			if ocr {
				var ok bool
				switch col.kind {
				case colOut, colIn, colAmount, colBalance:
					c.s, ok = ocrAmountText(c.s)
				case colDate:
					c.s, ok = ocrDateText(c.s)
				}
				if ok {
					fixed++
				}
			}
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
		for i := range amts {
			if amts[i].kind == colBalance {
				lineBal = amts[i].a.signedValue()
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
		if _, own := headerOn[l.page]; !own && lineDate != nil && pageFound == 0 {
			// On a page without its own header, text above its first
			// dated row is the page's heading, not a description.
			desc = lineDesc
		}
		found = append(found, pending{date: date, amt: *txAmt, kind: kind, desc: strings.Join(desc, " ")})
		pageFound++
		if lineBal != nil {
			anchors = append(anchors, balanceAnchor{after: len(found), v: lineBal})
		}
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
			return Result{}, false, unreadable("a PDF without a table of transactions (no header naming a date and an amount column)")
		}
		return Result{}, false, unreadable("a PDF whose transaction table is empty")
	}
	b.res.Layout = strings.ToUpper(format) + " table: " + header
	if balances > 0 {
		b.res.Layout += ", " + countOf(balances, "balance row") + " left out"
	}
	if crOnly {
		b.res.Layout += ", credits marked CR"
	}
	vals := make([]*big.Rat, len(found))
	for i, p := range found {
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
		vals[i] = v
	}
	rc := reconcile(vals, anchors, readSummary(lines, ocr), ocr)
	b.res.Warnings = append(b.res.Warnings, rc.warnings...)
	b.res.Uncertain = append(b.res.Uncertain, rc.notes...)
	if ocr {
		if fixed > 0 {
			b.warn("%s read by OCR had letters for digits or a misread month, put right", countOf(fixed, "date or amount"))
		}
		if !rc.checked {
			b.res.Uncertain = append(b.res.Uncertain, "read by OCR from a scan, and the statement prints no balances to check the figures against: check them")
		}
	}
	noYear := false
	for i, p := range found {
		d := p.date
		if d.noYear {
			d.y = end.y
			if end.y == 0 {
				noYear = true
				d.y = 2000
			} else if d.a > end.a || (d.a == end.a && d.b > end.b+7) {
				d.y--
			}
		}
		review := rc.review[i]
		if review == "" && ocr && !rc.checked {
			review = "read by OCR and not checked against a balance"
		}
		if err := b.add(rawTxn{date: d, amt: vals[i], ccy: p.amt.ccy, desc: p.desc, review: review}); err != nil {
			return Result{}, false, err
		}
	}
	if noYear {
		b.res.Uncertain = append(b.res.Uncertain, "the statement's year could not be found")
	}
	r, err := b.finish()
	return r, rc.checked, err
}

// mergeDateCells joins neighbouring cells under one date column that
// make a date together ("03 Mar" "24"), as OCR may leave them.
func mergeDateCells(cols []pdfColumn, cells []pdfCell) []pdfCell {
	var out []pdfCell
	for _, c := range cells {
		if n := len(out); n > 0 {
			p := out[n-1]
			pc, cc := nearestColumn(cols, p), nearestColumn(cols, c)
			if pc.kind == colDate && cc.kind == colDate && pc.x0 == cc.x0 {
				joined := p.s + " " + c.s
				d1, ok1 := splitDate(p.s)
				if d2, ok2 := splitDate(joined); ok2 && (!ok1 || d1.noYear && !d2.noYear) {
					out[n-1] = pdfCell{p.x0, c.x1, joined}
					continue
				}
			}
		}
		out = append(out, c)
	}
	return out
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
	return mostCounted(counts)
}

// mostCounted is the key with the highest count (the first in order on a
// tie, so the answer is the same every run), "" when none counts.
func mostCounted(counts map[string]int) string {
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
