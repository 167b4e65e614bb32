package statements

import (
	"math/big"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// layout reads a statement PDF's table from where things sit rather than
// from a header naming its columns: banks print dates down the left and
// amounts in right-aligned columns, and whatever a header calls them, the
// positions are the same on every row. So the x-positions of the dates
// and amounts of many lines are clustered into columns; the column whose
// figures chain (the one before, plus or minus the row's amount, is this
// one) is the running balance; two amount columns of which each row fills
// one are money out and money in; one column is a signed amount. Header
// words, where there are any, name the sides. A transaction is a line
// with an amount in a transaction column; text lines under the
// description join the row they belong to; a date printed once serves the
// rows below it. The printed balances then check the rows, and where the
// chain breaks, an amount printed between the two balances but not read
// as a row (off its column) is taken back if it closes the gap.

// layoutLine is a line of the statement as tokens.
type layoutLine struct {
	page    int
	y, size float64
	toks    []layoutTok
	text    string
}

// cluster is a column found from positions.
type cluster struct {
	x    float64 // x1 of amounts (right-aligned), x0 of dates
	n    int
	kind int // colOut, colIn, colAmount, colBalance; 0 not used
	name string
	rank int // for date columns, as dateRank
	w    float64
}

// clusterPositions groups positions closer than tol, keeping each group's
// median and size.
func clusterPositions(xs []float64, tol float64) []cluster {
	if len(xs) == 0 {
		return nil
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	var out []cluster
	start := 0
	for i := 1; i <= len(xs); i++ {
		if i == len(xs) || xs[i]-xs[i-1] > tol {
			g := xs[start:i]
			out = append(out, cluster{x: g[len(g)/2], n: len(g)})
			start = i
		}
	}
	return out
}

// nearestCluster is the index of the cluster within tol of x, or -1.
func nearestCluster(cs []cluster, x, tol float64) int {
	best, bestD := -1, tol
	for i, c := range cs {
		if d := abs64(c.x - x); d <= bestD {
			best, bestD = i, d
		}
	}
	return best
}

// Balance, total and summary lines, by their words.
const (
	lineRow = iota
	lineOpening
	lineClosing
	lineTotal
)

var (
	openingWords = []string{"openingbalance", "previousbalance", "startingbalance", "beginningbalance", "broughtforward", "balancefromprevious",
		"altersaldo", "alterkontostand", "anfangssaldo", "saldovortrag", "saldoanterior", "saldoinicial", "anciensolde", "soldeprecedent", "previousstatementbalance", "balancelaststatement"}
	closingWords = []string{"closingbalance", "newbalance", "endingbalance", "carriedforward", "neuersaldo", "neuerkontostand", "endsaldo", "schlusssaldo",
		"saldofinal", "totalamountdue", "nouveausolde", "newstatementbalance", "statementbalance"}
	// Lines that carry an amount and are not transactions.
	summaryWords = []string{"creditlimit", "minimumpayment", "minimumdue", "paymentdue", "availablecredit", "availablebalance", "interestrate", "cashlimit",
		"overdraftlimit", "dispositionskredit", "kreditlinie", "amountdue", "annualpercentage"}
	reTotalStart = regexp.MustCompile(`(?i)^\s*(?:sub[\s-]?)?totals?\b|^\s*(?:summe|gesamt)`)
)

// lineClass says whether a line is a balance (opening or closing), a
// total or summary figure, or possibly a row.
func lineClass(text string) int {
	s := squashLetters(text)
	for _, w := range openingWords {
		if strings.Contains(s, w) {
			return lineOpening
		}
	}
	for _, w := range closingWords {
		if strings.Contains(s, w) {
			return lineClosing
		}
	}
	if reTotalStart.MatchString(text) || balanceRow.MatchString(text) {
		return lineTotal
	}
	for _, w := range summaryWords {
		if strings.Contains(s, w) {
			return lineTotal
		}
	}
	return lineRow
}

// squashLetters keeps a text's letters, lower-cased, with accents off the
// common ones.
func squashLetters(s string) string {
	s = strings.NewReplacer("é", "e", "è", "e", "ä", "a", "ö", "o", "ü", "u", "Ä", "a", "Ö", "o", "Ü", "u").Replace(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, s)
}

// Column names beyond those of headerColumns: German, and the words of
// US and UK statements' sections.
var (
	layoutOutNames     = append(slices.Clone(pdfOutNames), "soll", "lastschrift", "belastung", "ausgang", "ausgange", "abgang", "subtractions", "withdrawn", "debe", "cargo", "moneyout")
	layoutInNames      = append(slices.Clone(pdfInNames), "haben", "gutschrift", "eingang", "eingange", "zugang", "additions", "haber", "abono", "moneyin")
	layoutAmountNames  = append(slices.Clone(pdfAmountNames), "umsatz", "importo")
	layoutBalanceNames = append(slices.Clone(pdfBalanceNames), "kontostand")
	layoutDateNames    = []string{"date", "datum", "fecha", "buchungstag", "butag", "valuta", "wert", "wertstellung", "posted", "day", "tag"}
	layoutDescNames    = append(slices.Clone(pdfDescNames), "vorgang", "buchungstext", "verwendungszweck", "text", "transactiondescription", "erlauterung")
)

// nameKind is the column a heading names, or 0.
func nameKind(h string) int {
	s := squashLetters(h)
	if s == "" || len(strings.Fields(h)) > 4 {
		return 0
	}
	has := func(names []string) bool {
		for _, n := range names {
			if s == n || len(n) >= 4 && (strings.HasPrefix(s, n) || strings.HasSuffix(s, n)) {
				return true
			}
		}
		return false
	}
	switch {
	case has(layoutBalanceNames):
		return colBalance
	case has(layoutOutNames) && !has([]string{"paidin", "moneyin", "deposits", "credits"}):
		return colOut
	case has(layoutInNames):
		return colIn
	case has(layoutAmountNames):
		return colAmount
	case has(layoutDateNames) || strings.Contains(s, "date") || strings.Contains(s, "datum"):
		return colDate
	case has(layoutDescNames):
		return colDesc
	}
	return 0
}

// Section headings that say which way their rows' money goes.
var (
	reSectionIn  = regexp.MustCompile(`(?i)^\s*(?:deposits|credits|additions|other additions|payments and (?:other )?credits|payments received|money in|paid in|incoming|gutschriften|eingänge|haben)\b`)
	reSectionOut = regexp.MustCompile(`(?i)^\s*(?:withdrawals|debits|subtractions|other subtractions|checks|cheques|purchases|charges|fees|service fees|card (?:transactions|purchases)|electronic withdrawals|atm|money out|paid out|outgoing|lastschriften|belastungen|ausgänge|soll)\b`)
)

// layoutRow is one transaction read from the layout.
type layoutRow struct {
	line      int // index of its amount line
	date      dateCell
	desc      []string
	amt       amount
	kind      int // colOut, colIn or colAmount
	dir       int // the section's direction: +1 in, -1 out, 0 none
	bal       *big.Rat
	recovered bool
	val       *big.Rat
}

// layoutAnchor is a balance printed after the first `after` rows.
type layoutAnchor struct {
	after   int
	line    int
	v       *big.Rat
	opening bool
}

// layoutTable is what the positions say of a statement's table.
type layoutTable struct {
	lines    []layoutLine
	dateCols []cluster
	dateCol  int // the date column whose dates are taken
	amtCols  []cluster
	descX    float64
	pitch    float64
	docCcy   string
	card     bool
	amountOn bool // a dated line mostly carries its amount (else the amount ends the row)
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// isFX: an amount in another currency than the statement's, which is
// part of a description ("USD 25.00" beside a purchase abroad).
func (t *layoutTable) isFX(tok layoutTok) bool {
	return tok.kind == tokAmount && tok.amt.ccy != "" && t.docCcy != "" && tok.amt.ccy != t.docCcy
}

// leadingDates is the line's dates printed before any text.
func leadingDates(l layoutLine) []layoutTok {
	var out []layoutTok
	for _, tok := range l.toks {
		if tok.kind != tokDate || len(out) == 2 {
			break
		}
		out = append(out, tok)
	}
	return out
}

// findColumns clusters the dates and amounts of the lines into columns.
func (t *layoutTable) findColumns() bool {
	size := medianOf(func() []float64 {
		var s []float64
		for _, l := range t.lines {
			s = append(s, l.size)
		}
		return s
	}())
	size = max(size, 4)
	var dxs []float64
	for _, l := range t.lines {
		for _, d := range leadingDates(l) {
			dxs = append(dxs, d.x0)
		}
	}
	dcs := clusterPositions(dxs, max(6, size))
	best := 0
	for _, c := range dcs {
		best = max(best, c.n)
	}
	if best < 1 {
		return false
	}
	for _, c := range dcs {
		if c.n >= max(2, best/4) || best == 1 {
			t.dateCols = append(t.dateCols, c)
		}
	}
	// The lines of the table: from a dated line to a few lines after.
	zone := make([]bool, len(t.lines))
	last := -100
	for i, l := range t.lines {
		if t.datedAt(l) {
			last = i
		}
		if i-last <= 8 && last >= 0 && t.lines[last].page == l.page {
			zone[i] = true
		}
	}
	firstDate := t.dateCols[0].x
	var axs []float64
	for i, l := range t.lines {
		if !zone[i] || lineClass(l.text) == lineTotal {
			continue
		}
		for j, tok := range l.toks {
			if tok.kind != tokAmount || t.isFX(tok) || tok.x0 < firstDate {
				continue
			}
			if textAfter(l.toks[j+1:]) {
				continue // a column's amount ends its line
			}
			axs = append(axs, tok.x1)
		}
	}
	acs := clusterPositions(axs, max(5, 0.8*size))
	var kept []cluster
	for _, c := range acs {
		if c.n >= 2 {
			kept = append(kept, c)
		}
	}
	// A column with one figure (the month's only deposit) stands apart
	// from the text before it.
	for i, l := range t.lines {
		if !zone[i] || lineClass(l.text) == lineTotal {
			continue
		}
		for j, tok := range l.toks {
			if tok.kind != tokAmount || t.isFX(tok) || tok.inCell || j == 0 || textAfter(l.toks[j+1:]) || tok.x0 < firstDate {
				continue
			}
			if tok.x0-l.toks[j-1].x1 >= 3*size && nearestCluster(kept, tok.x1, max(5, 0.8*size)) < 0 && len(kept) > 0 && tok.x1 > kept[0].x-200 {
				kept = append(kept, cluster{x: tok.x1, n: 1})
			}
		}
	}
	sort.Slice(kept, func(a, b int) bool { return kept[a].x < kept[b].x })
	t.amtCols = kept
	if len(kept) == 0 {
		return false
	}
	// The description starts where the text of dated lines does.
	var descs, gaps []float64
	prev := -1
	for i, l := range t.lines {
		if !zone[i] {
			continue
		}
		if t.datedAt(l) {
			for _, tok := range l.toks {
				if tok.kind == tokText {
					descs = append(descs, tok.x0)
					break
				}
			}
		}
		if prev >= 0 && t.lines[prev].page == l.page && t.lines[prev].y > l.y {
			gaps = append(gaps, t.lines[prev].y-l.y)
		}
		prev = i
	}
	t.descX = medianOf(descs)
	if len(descs) == 0 {
		t.descX = firstDate + 4*size
	}
	t.pitch = max(medianOf(gaps), size)
	return true
}

func textAfter(toks []layoutTok) bool {
	for _, tok := range toks {
		if tok.kind == tokText {
			return true
		}
	}
	return false
}

// datedAt: the line starts with a date in a date column.
func (t *layoutTable) datedAt(l layoutLine) bool {
	ds := leadingDates(l)
	return len(ds) > 0 && nearestCluster(t.dateCols, ds[0].x0, max(6, l.size)) >= 0
}

// lineDate is the date a dated line gives: the one under the preferred
// date column when it has two.
func (t *layoutTable) lineDate(l layoutLine) (dateCell, bool) {
	ds := leadingDates(l)
	if len(ds) == 0 || nearestCluster(t.dateCols, ds[0].x0, max(6, l.size)) < 0 {
		return dateCell{}, false
	}
	for _, d := range ds {
		if nearestCluster(t.dateCols, d.x0, max(6, l.size)) == t.dateCol {
			return d.date, true
		}
	}
	return ds[0].date, true
}

// amountsIn is the line's amounts by the column they fall in, and those
// in no column (stray), leaving out amounts in another currency. all
// takes columns whose role is not decided yet.
func (t *layoutTable) amountsIn(l layoutLine, all bool) (in map[int]layoutTok, stray []layoutTok) {
	in = map[int]layoutTok{}
	tol := max(8, 1.5*l.size)
	for j, tok := range l.toks {
		if tok.kind != tokAmount || t.isFX(tok) {
			continue
		}
		c := nearestCluster(t.amtCols, tok.x1, tol)
		if c < 0 || textAfter(l.toks[j+1:]) || !all && t.amtCols[c].kind == 0 {
			stray = append(stray, tok)
			continue
		}
		if _, dup := in[c]; dup {
			stray = append(stray, tok)
			continue
		}
		in[c] = tok
	}
	return in, stray
}

// nameColumns takes the columns' names from header lines: the heading
// above each column.
func (t *layoutTable) nameColumns() {
	votes := make([]map[int]int, len(t.amtCols))
	for i := range votes {
		votes[i] = map[int]int{}
	}
	dateVotes := make([]int, len(t.dateCols))
	for _, l := range t.lines {
		if !t.headerLine(l) {
			continue
		}
		for _, tok := range l.toks {
			k := nameKind(tok.s)
			switch k {
			case colOut, colIn, colAmount, colBalance:
				best, bestD := -1, 80.0
				for i, c := range t.amtCols {
					if d := min(abs64(c.x-tok.x1), abs64(c.x-(tok.x0+tok.x1)/2)); d < bestD {
						best, bestD = i, d
					}
				}
				if best >= 0 {
					votes[best][k]++
					if t.amtCols[best].name == "" {
						t.amtCols[best].name = tok.s
					}
				}
			case colDate:
				if i := nearestCluster(t.dateCols, tok.x0, 30); i >= 0 {
					dateVotes[i] = max(dateVotes[i], dateRank(strings.ToLower(tok.s)))
				}
			}
		}
	}
	for i := range t.amtCols {
		best, n := 0, 0
		for _, k := range []int{colOut, colIn, colAmount, colBalance} {
			if votes[i][k] > n {
				best, n = k, votes[i][k]
			}
		}
		t.amtCols[i].kind = best
	}
	t.dateCol = 0
	for i, r := range dateVotes {
		if r > dateVotes[t.dateCol] {
			t.dateCol = i
		}
	}
}

// headerLine: a line of column names, no figures.
func (t *layoutTable) headerLine(l layoutLine) bool {
	names := 0
	for _, tok := range l.toks {
		if tok.kind != tokText {
			return false
		}
		if nameKind(tok.s) != 0 {
			names++
		}
	}
	return names >= 2
}
