package statements

import (
	"encoding/csv"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// parseCSV reads a delimited statement. The table is found among
// preamble and trailer lines by its rows that hold a date and an amount;
// its columns are named by a header when there is one and decided by what
// they hold over the whole file otherwise.
func parseCSV(text string, opts Options) (Result, error) {
	delim, err := sniffDelimiter(text)
	if err != nil {
		return Result{}, err
	}
	rows, err := readRows(text, delim, MaxRows+1000)
	if err != nil {
		return Result{}, err
	}
	if len(rows) == 0 {
		return Result{}, unreadable("the file is empty")
	}
	if len(rows) > MaxRows+1000 {
		return Result{}, unreadable("more than %d rows", MaxRows)
	}
	first, last, headerAt := locateTable(rows)
	if first < 0 {
		if len(rows) > 0 && isHeader(rows[0]) {
			return Result{}, unreadable("a header but no rows with a date and an amount")
		}
		return Result{}, unreadable("no rows with a date and an amount")
	}
	var header []string
	if headerAt >= 0 {
		header = rows[headerAt]
	}
	preamble := rows[:max(0, first)]
	if headerAt >= 0 {
		preamble = rows[:headerAt]
	}
	var body [][]string
	skipped, aside, asideBalances := 0, 0, 0
	dateAt := dateCellMode(rows[first : last+1])
	for _, r := range rows[first : last+1] {
		switch {
		case !dataRow(r):
			if nonEmpty(r) > 1 {
				skipped++
			}
		case !isDate(cell(r, dateAt)):
			// A balance line ("Solde au;31/10/2026;;;2 508,61") has its
			// date and amount in other cells than the table's rows.
			if slices.ContainsFunc(r, balanceRow.MatchString) {
				asideBalances++
			} else {
				aside++
			}
		default:
			body = append(body, r)
		}
	}
	trailer := 0
	for _, r := range rows[last+1:] {
		if nonEmpty(r) > 0 {
			trailer++
		}
	}
	m, err := mapColumns(header, body)
	if err != nil {
		return Result{}, err
	}
	if len(preamble) > 0 {
		m.layout += ", after " + countOf(len(preamble), "preamble line")
		if c := currencyIn(preamble); c != "" && m.fileCcy == "" {
			m.fileCcy = c
		}
	}
	if trailer > 0 {
		m.layout += ", " + countOf(trailer, "trailer line") + " left out"
	}
	b := newBuilder("csv", m.layout, opts)
	b.guessed = m.guessed
	if m.fileCcy == "" && m.currency < 0 {
		b.inferredCcy, b.inferredFrom = inferCurrency(header, preamble)
	}
	if skipped > 0 {
		b.warn("left out %s without a date and an amount", countOf(skipped, "row"))
	}
	if asideBalances > 0 {
		b.res.Layout += ", " + countOf(asideBalances, "balance line") + " outside the table left out"
	}
	if aside > 0 {
		b.warn("left out %s with the date in another column than the table's", countOf(aside, "row"))
	}
	if err := m.apply(b, body); err != nil {
		return Result{}, err
	}
	return b.finish()
}

func countOf(n int, what string) string {
	s := what
	if n != 1 {
		s += "s"
	}
	return itoa(n) + " " + s
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

func nonEmpty(r []string) int {
	n := 0
	for _, c := range r {
		if c != "" {
			n++
		}
	}
	return n
}

func sniffDelimiter(text string) (rune, error) {
	sample := text
	if i := nthIndex(text, '\n', 200); i > 0 {
		sample = text[:i]
	}
	best, bestScore := rune(0), 0.0
	for _, d := range []rune{',', ';', '\t', '|'} {
		rows, err := readRows(sample, d, 200)
		if err != nil || len(rows) == 0 {
			continue
		}
		counts := map[int]int{}
		for _, r := range rows {
			counts[len(r)]++
		}
		mode, n := 0, 0
		for c, k := range counts {
			if k > n || (k == n && c > mode) {
				mode, n = c, k
			}
		}
		if mode < 2 {
			continue
		}
		score := float64(n) / float64(len(rows)) * float64(min(mode, 12))
		if score > bestScore {
			best, bestScore = d, score
		}
	}
	if best == 0 {
		return 0, unreadable("no columns found")
	}
	return best, nil
}

func nthIndex(s string, c byte, n int) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n--
			if n == 0 {
				return i
			}
		}
	}
	return -1
}

func readRows(text string, delim rune, limit int) ([][]string, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord, r.ReuseRecord = delim, true, -1, false
	var rows [][]string
	for len(rows) < limit {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, unreadable("%v", err)
		}
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if len(rec) > maxColumns {
			rec = rec[:maxColumns]
		}
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		rows = append(rows, rec)
	}
	return rows, nil
}

// locateTable finds the table among preamble and trailer lines: first and
// last are its first and last rows with a date and an amount, headerAt its
// header row (-1 when it has none). The header is the first row that names
// a date column and an amount, debit or credit column, with transactions
// below it; without one, the table starts at the first run of rows that
// read as transactions, so that a balance line above it ("Solde;30/09/2026;
// 1 234,56") is preamble.
func locateTable(rows [][]string) (first, last, headerAt int) {
	first, last, headerAt = -1, -1, -1
	for i, r := range rows {
		if dataRow(r) {
			last = i
		}
	}
	if last < 0 {
		return -1, -1, -1
	}
	for i, r := range rows[:last] {
		if namesTable(r) {
			// The header is the last row naming the table before its
			// first transaction (a summary line above may name some too).
			for j := i + 1; j <= last; j++ {
				if dataRow(rows[j]) {
					return j, last, i
				}
				if namesTable(rows[j]) {
					i = j
				}
			}
		}
	}
	for i := range rows[:last+1] {
		if !dataRow(rows[i]) {
			continue
		}
		if first < 0 {
			first = i
		}
		if i < last && dataRow(rows[i+1]) && dateCellOf(rows[i+1]) == dateCellOf(rows[i]) {
			first = i
			break
		}
	}
	for i := first - 1; i >= max(0, first-3); i-- {
		if isHeader(rows[i]) {
			headerAt = i
			break
		}
	}
	return first, last, headerAt
}

// dateWords name a date column in the languages of the statements read.
var dateWords = []string{"date", "datum", "dato", "fecha", "buchungstag", "wertstellung", "valuta", "bogført", "bokført", "bokföring", "transaktionsdag", "data"}

// namesTable: a header row naming a date column and an amount, debit or
// credit column ("Date opération;Libellé;Débit;Crédit").
func namesTable(r []string) bool {
	if !isHeader(r) {
		return false
	}
	date, money := false, false
	for _, c := range r {
		h := strings.ToLower(strings.Trim(c, " \"'*"))
		if h == "" {
			continue
		}
		if slices.ContainsFunc(dateWords, func(w string) bool { return nameIs(h, w) || (w != "data" && strings.Contains(h, w)) }) {
			date = true
		} else if namedMoney(h) && !slices.ContainsFunc(balanceWords, func(w string) bool { return strings.Contains(h, w) }) {
			money = true
		}
	}
	return date && money
}

// dateCellOf is the index of a row's first date cell, -1 when none.
func dateCellOf(r []string) int {
	for i, c := range r {
		if _, ok := splitDate(c); ok {
			return i
		}
	}
	return -1
}

func isDate(s string) bool {
	_, ok := splitDate(s)
	return ok
}

// dateCellMode is where most of the rows with a date and an amount have
// their first date (the lowest index on a tie).
func dateCellMode(rows [][]string) int {
	n := map[int]int{}
	best := -1
	for _, r := range rows {
		if !dataRow(r) {
			continue
		}
		i := dateCellOf(r)
		n[i]++
		if best < 0 || n[i] > n[best] || (n[i] == n[best] && i < best) {
			best = i
		}
	}
	return best
}

// dataRow: a row with a date in one cell and an amount in another.
func dataRow(r []string) bool {
	if len(r) < 2 {
		return false
	}
	date := -1
	for i, c := range r {
		if _, ok := splitDate(c); ok {
			date = i
			break
		}
	}
	if date < 0 {
		return false
	}
	for i, c := range r {
		if i == date || c == "" {
			continue
		}
		if a, err := readAmount(c, sepAuto); err == nil && (a.decimals > 0 || len(c) <= 7) {
			return true
		}
	}
	return false
}

// isHeader: a row with words and no dates or decimal amounts.
func isHeader(row []string) bool {
	words := 0
	for _, c := range row {
		if _, ok := splitDate(c); ok {
			return false
		}
		if _, dec, err := parseAmount(c); err == nil && dec {
			return false
		}
		if strings.IndexFunc(c, unicode.IsLetter) >= 0 {
			words++
		}
	}
	return words >= 2
}

// currencyIn finds the one currency code that lines name (preamble lines
// such as "Currency;DKK" or "Account 1234 EUR").
func currencyIn(rows [][]string) string {
	found := ""
	for _, r := range rows {
		for _, c := range r {
			for _, w := range strings.FieldsFunc(c, func(r rune) bool { return !unicode.IsLetter(r) }) {
				if len(w) == 3 && isCurrency(w) {
					if found != "" && found != w {
						return ""
					}
					found = w
				}
			}
		}
	}
	return found
}

// mapping says which column holds what.
type mapping struct {
	layout              string
	date, amount        int // -1 when absent
	debit, credit       int
	desc                []int
	currency, kind, dir int
	flip                bool // amounts are from the card issuer's side
	guessed             bool
	fileCcy             string
	sep                 map[int]rune // decimal separator by column
}

func noMapping() mapping {
	return mapping{date: -1, amount: -1, debit: -1, credit: -1, currency: -1, kind: -1, dir: -1, sep: map[int]rune{}}
}

// Header names. Order within a list is preference.
var (
	amountNames = []string{"amount", "transaction amount", "gross", "betrag", "montant", "importe", "importo", "bedrag", "beløb", "belopp",
		"beløp", "kwota", "valor", "umsatz", "sum", "value", "net", "amt"}
	debitNames  = []string{"debit", "withdrawal", "paid out", "money out", "outgoing", "out", "payments", "charges", "soll", "débit", "débito", "debito", "cargo", "ausgang", "af", "spent"}
	creditNames = []string{"credit", "deposit", "paid in", "money in", "incoming", "in", "receipts", "haben", "crédit", "crédito", "credito", "abono", "eingang", "bij", "received"}
	descNames   = []string{"description", "summary", "transaction details", "details", "narrative", "particulars", "memo", "payee", "merchant",
		"name", "beschreibung", "verwendungszweck", "buchungstext", "omschrijving", "libellé", "libelle", "concepto", "descripción", "text", "tekst", "label",
		"item title", "counterparty", "beneficiary", "reference", "notes", "remarks"}
	balanceWords = []string{"balance", "saldo", "solde", "kontostand"}
)

// nameIs: the header cell is the name or has it as a word.
func nameIs(h, name string) bool {
	if h == name {
		return true
	}
	i := strings.Index(h, name)
	for i >= 0 {
		before := i == 0 || !unicode.IsLetter(rune(h[i-1]))
		end := i + len(name)
		after := end >= len(h) || !unicode.IsLetter(rune(h[end]))
		if before && after {
			return true
		}
		j := strings.Index(h[i+1:], name)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// rankIn is the name's place in names: exact names first, then names
// that are a word of it ("Amount (DKK)").
func rankIn(h string, names []string) int {
	h = strings.TrimSpace(h)
	for i, n := range names {
		if h == n {
			return i
		}
	}
	for i, n := range names {
		if nameIs(h, n) {
			return len(names) + i
		}
	}
	return -1
}

// dateRank orders date columns by name: the transaction or booking date
// over the value, initial, process or due date.
func dateRank(h string) int {
	for _, w := range []string{"value", "valuta", "wertstellung", "valeur", "initial", "process", "effective", "settle", "received", "due", "valor", "start", "end"} {
		if strings.Contains(h, w) {
			return 1
		}
	}
	for _, w := range []string{"transaction", "trans", "transaktion", "purchase", "operation", "opération", "operación"} {
		if strings.Contains(h, w) {
			return 4
		}
	}
	for _, w := range []string{"book", "buchung", "post", "boek", "bokför", "compta"} {
		if strings.Contains(h, w) {
			return 3
		}
	}
	return 2
}

// mapColumns decides what each column holds, from the header's names
// where there is one and from the whole body's contents.
func mapColumns(header []string, body [][]string) (mapping, error) {
	m := noMapping()
	cols := stats(body)
	for i, c := range cols {
		m.sep[i] = c.sep
	}
	names := make([]string, len(cols))
	for i := range names {
		if i < len(header) {
			names[i] = strings.ToLower(strings.Trim(header[i], " \"'*"))
		}
	}
	// Date: among the columns of dates, the best-named.
	bestRank := 0
	for i, c := range cols {
		if !c.dateColumn() {
			continue
		}
		r := 2
		if header != nil {
			r = dateRank(names[i])
		}
		if r > bestRank {
			m.date, bestRank = i, r
		}
	}
	if m.date < 0 {
		return m, unreadable("no column of dates")
	}
	var money []int
	for i, c := range cols {
		switch {
		case i == m.date || c.dateColumn():
		case c.moneyColumn() || (c.nonEmpty > 0 && c.amounts == c.nonEmpty && namedMoney(names[i])):
			money = append(money, i)
		case valuesIn(c, "AF", "BIJ", "D", "C", "DR", "CR", "DB", "DEBIT", "CREDIT", "S", "H"):
			if m.dir < 0 && (header == nil || !slices.ContainsFunc(descNames, func(n string) bool { return nameIs(names[i], n) })) {
				m.dir = i
			}
		case valuesIn(c, "DEBIT", "CREDIT", "CHECK", "DEP", "DIRECTDEBIT", "ATM", "POS", "FEE", "XFER", "PAYMENT", "INT", "SRVCHG", "OTHER", "CASH"):
			m.kind = i
		case c.nonEmpty > 0 && allCurrencies(c.values):
			m.currency = i
		}
	}
	if m.currency < 0 {
		// One currency in the amount cells, or in a header "Amount (DKK)".
		for _, i := range money {
			if c := cols[i].ccy; c != "" {
				m.fileCcy = c
			}
			if cols[i].dollar {
				m.layout = "dollar amounts"
			}
		}
		if m.fileCcy == "" && header != nil {
			m.fileCcy = currencyIn([][]string{header})
		}
	}
	// Amounts: by name first.
	var amountCols, debitCols, creditCols []int
	for _, i := range money {
		h := names[i]
		if h == "" {
			continue
		}
		if slices.ContainsFunc(balanceWords, func(w string) bool { return strings.Contains(h, w) }) {
			continue
		}
		d, c, a := rankIn(h, debitNames), rankIn(h, creditNames), rankIn(h, amountNames)
		switch {
		case d >= 0 && c < 0:
			debitCols = append(debitCols, i)
		case c >= 0 && d < 0:
			creditCols = append(creditCols, i)
		case a >= 0 || (d >= 0 && c >= 0):
			amountCols = append(amountCols, i)
		}
	}
	slices.SortStableFunc(amountCols, func(x, y int) int { return rankIn(names[x], amountNames) - rankIn(names[y], amountNames) })
	switch {
	case len(debitCols) > 0 && len(creditCols) > 0:
		m.debit, m.credit = debitCols[0], creditCols[0]
		m.layout = join(m.layout, "debit and credit columns by name")
	case len(amountCols) > 0:
		m.amount = amountCols[0]
		m.layout = join(m.layout, "amount column by name")
	default:
		var unnamedBalance []int
		for _, i := range money {
			h := names[i]
			if !slices.ContainsFunc(balanceWords, func(w string) bool { return strings.Contains(h, w) }) {
				unnamedBalance = append(unnamedBalance, i)
			}
		}
		if err := m.byContent(body, unnamedBalance, money); err != nil {
			return m, err
		}
		if header != nil {
			m.layout = join(m.layout, "under a header of unknown names")
		}
	}
	m.pickDescription(cols, names, money, header != nil)
	if m.kind >= 0 && m.amount >= 0 {
		// Card exports that write purchases as positive DEBITs are from the
		// card issuer's side: flip them to the holder's.
		pos, neg := 0, 0
		for _, r := range body {
			if !strings.EqualFold(cell(r, m.kind), "DEBIT") {
				continue
			}
			if v, _, err := parseAmount(cell(r, m.amount)); err == nil {
				if v > 0 {
					pos++
				} else if v < 0 {
					neg++
				}
			}
		}
		m.flip = pos > neg
		if m.flip {
			m.layout += ", card charges written as positive"
		}
	}
	if header != nil {
		m.layout = "header: " + strings.Join(header[:min(len(header), 8)], ", ") + "; " + m.layout
	}
	return m, nil
}

// namedMoney: a header names the column an amount, debit or credit (whose
// cells may be whole numbers: yen have no minor unit).
func namedMoney(h string) bool {
	return h != "" && (rankIn(h, amountNames) >= 0 || rankIn(h, debitNames) >= 0 || rankIn(h, creditNames) >= 0)
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// byContent decides the amount columns of a headerless file (or one whose
// header names none of them) by how they relate: balances before and
// after, debit and credit columns each row fills one of, an amount beside
// a running balance.
func (m *mapping) byContent(rows [][]string, candidates, money []int) error {
	if len(candidates) == 0 {
		candidates = money
	}
	switch {
	case len(candidates) == 0:
		return unreadable("no column of amounts")
	case len(candidates) == 1:
		m.amount = candidates[0]
		m.layout = join(m.layout, "date and amount columns")
	case len(money) > maxMoneyColumns:
		m.amount, m.guessed = candidates[0], true
		m.layout = join(m.layout, "guessed the first of many amount columns")
	default:
		if a, ok := balanceDifference(rows, money); ok {
			m.amount = a
			m.layout = join(m.layout, "amount with balances before and after")
		} else if d, c, ok := debitCredit(rows, candidates); ok {
			m.debit, m.credit = d, c
			m.layout = join(m.layout, "debit and credit columns")
		} else if a, ok := besideRunningBalance(rows, money); ok {
			m.amount = a
			m.layout = join(m.layout, "amount beside a running balance")
		} else {
			m.amount, m.guessed = candidates[0], true
			m.layout = join(m.layout, "guessed the first of several amount columns")
		}
	}
	return nil
}

// pickDescription ranks the text columns: by name under a header, else by
// how many letters they hold; apply takes the first one a row fills.
func (m *mapping) pickDescription(cols []colStats, names []string, money []int, named bool) {
	type ranked struct {
		col   int
		score float64
	}
	var texts []ranked
	for i, c := range cols {
		if i == m.date || i == m.amount || i == m.debit || i == m.credit || i == m.dir || i == m.kind || i == m.currency || slices.Contains(money, i) ||
			(c.letters == 0 && !(named && rankIn(names[i], descNames) >= 0)) {
			continue
		}
		score := c.wordiness / float64(max(1, c.cells))
		if named {
			if r := rankIn(names[i], descNames); r >= 0 {
				score = 1e6 - float64(r)
			}
		}
		texts = append(texts, ranked{i, score})
	}
	slices.SortStableFunc(texts, func(a, b ranked) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	for _, r := range texts {
		m.desc = append(m.desc, r.col)
	}
	if len(m.desc) == 0 && m.kind >= 0 {
		m.desc = []int{m.kind}
	}
}

// colStats is what one column holds across rows.
type colStats struct {
	cells, nonEmpty, dates, amounts, decimals, moneyish, digitsOnly int
	letters, wordiness                                              float64
	values                                                          []string
	sep                                                             rune
	ccy                                                             string
	dollar                                                          bool
	mixedCcy                                                        bool
}

var reDigits = regexp.MustCompile(`^[0-9]+$`)

// maxMoneyColumns bounds the search for balance and debit/credit columns
// (cubic in their number); statements have a handful.
const maxMoneyColumns = 8

// maxColumns is the widest row read (PayPal's export has 41).
const maxColumns = 128

var (
	reCommaDecimal = regexp.MustCompile(`(?:^|[^0-9.,])[0-9]{1,3}(?:\.[0-9]{3})*,[0-9]{1,2}(?:$|[^0-9])|[0-9],[0-9]{4,}`)
	reDotDecimal   = regexp.MustCompile(`(?:^|[^0-9.,])[0-9]{1,3}(?:,[0-9]{3})*\.[0-9]{1,2}(?:$|[^0-9])|[0-9]\.[0-9]{4,}`)
)

func stats(rows [][]string) []colStats {
	width := 0
	for _, r := range rows {
		width = max(width, min(len(r), maxColumns))
	}
	cols := make([]colStats, width)
	for _, r := range rows {
		for i, c := range r[:min(len(r), maxColumns)] {
			s := &cols[i]
			s.cells++
			s.values = append(s.values, c)
			if c == "" {
				continue
			}
			s.nonEmpty++
			if _, ok := splitDate(c); ok {
				s.dates++
			}
			if a, err := readAmount(c, sepAuto); err == nil {
				s.amounts++
				if a.decimals > 0 {
					s.decimals++
				}
				if a.decimals > 0 || a.r.Sign() == 0 || a.ccy != "" || a.dollar {
					s.moneyish++
				}
				if a.ccy != "" {
					if s.ccy != "" && s.ccy != a.ccy {
						s.mixedCcy = true
					}
					s.ccy = a.ccy
				}
				s.dollar = s.dollar || a.dollar
				switch {
				case reCommaDecimal.MatchString(c) && !reDotDecimal.MatchString(c):
					if s.sep == sepAuto {
						s.sep = sepComma
					}
				case reDotDecimal.MatchString(c) && !reCommaDecimal.MatchString(c):
					if s.sep == sepAuto {
						s.sep = sepDot
					}
				}
			}
			if reDigits.MatchString(c) {
				s.digitsOnly++
			}
			n, d := 0, 0
			for _, ch := range c {
				if unicode.IsLetter(ch) {
					n++
				} else if unicode.IsDigit(ch) {
					d++
				}
			}
			s.letters += float64(n)
			s.wordiness += float64(n - d) // names have letters; account numbers have digits
		}
	}
	for i := range cols {
		if cols[i].nonEmpty > 0 {
			cols[i].letters /= float64(cols[i].nonEmpty)
		}
		if cols[i].mixedCcy {
			cols[i].ccy = ""
		}
	}
	return cols
}

// moneyColumn: every non-empty cell an amount, and the non-zero ones
// written with decimals or a currency (so account numbers and references
// do not count).
func (s colStats) moneyColumn() bool {
	return s.nonEmpty > 0 && s.amounts == s.nonEmpty && s.moneyish == s.nonEmpty && (s.decimals > 0 || s.ccy != "" || s.dollar)
}

func (s colStats) dateColumn() bool { return s.nonEmpty > 0 && s.dates == s.nonEmpty }

func valuesIn(s colStats, set ...string) bool {
	if s.nonEmpty == 0 {
		return false
	}
	for _, v := range s.values {
		if v == "" {
			continue
		}
		if !slices.Contains(set, strings.ToUpper(v)) {
			return false
		}
	}
	return true
}

func allCurrencies(vs []string) bool {
	for _, v := range vs {
		if v != "" && !isCurrency(strings.ToUpper(v)) {
			return false
		}
	}
	return true
}

func cell(r []string, i int) string {
	if i < 0 || i >= len(r) {
		return ""
	}
	return r[i]
}

func amountAt(r []string, i int) int64 {
	v, _, _ := parseAmount(cell(r, i))
	return v
}

// balanceDifference finds an amount column equal to the difference of two
// balance columns (before, after) on every row.
func balanceDifference(rows [][]string, money []int) (int, bool) {
	for _, a := range money {
		for _, before := range money {
			for _, after := range money {
				if a == before || a == after || before == after {
					continue
				}
				all := true
				for _, r := range rows {
					if amountAt(r, after)-amountAt(r, before) != amountAt(r, a) {
						all = false
						break
					}
				}
				// a + before = after is symmetric in a and before: the
				// amount is the one that goes negative.
				if all && hasNegative(rows, a) && !hasNegative(rows, before) {
					return a, true
				}
			}
		}
	}
	return 0, false
}

func hasNegative(rows [][]string, col int) bool {
	for _, r := range rows {
		if amountAt(r, col) < 0 {
			return true
		}
	}
	return false
}

// debitCredit finds two columns of which each row fills exactly one.
func debitCredit(rows [][]string, money []int) (debit, credit int, ok bool) {
	for i, d := range money {
		for _, c := range money[i+1:] {
			all := true
			for _, r := range rows {
				dv, cv := amountAt(r, d), amountAt(r, c)
				if (dv == 0) == (cv == 0) {
					all = false
					break
				}
			}
			if all {
				return d, c, true
			}
		}
	}
	return 0, 0, false
}

// besideRunningBalance finds, of two money columns, the one that moves the
// other from row to row (oldest first or newest first).
func besideRunningBalance(rows [][]string, money []int) (int, bool) {
	if len(rows) < 2 {
		return 0, false
	}
	for _, a := range money {
		for _, b := range money {
			if a == b {
				continue
			}
			up, down := true, true
			for i := 1; i < len(rows); i++ {
				if amountAt(rows[i], b)-amountAt(rows[i-1], b) != amountAt(rows[i], a) {
					up = false
				}
				if amountAt(rows[i-1], b)-amountAt(rows[i], b) != amountAt(rows[i-1], a) {
					down = false
				}
			}
			if up || down {
				return a, true
			}
		}
	}
	return 0, false
}

// balanceRow matches the text of opening, closing, brought-forward and
// total rows, which are never transactions.
var balanceRow = regexp.MustCompile(`(?i)^\s*(?:` +
	`(?:opening|closing|previous|new|starting|ending|beginning|start|end|available|ledger|statement|current)\s+balance` +
	`|balance\s*(?:brought|carried|b/?f|c/?f|forward|at|as|on|$)` +
	`|(?:brought|carried)\s+(?:forward|fwd)|b/f\b|c/f\b|bfwd|cfwd` +
	`|saldo\b|solde\b|anfangssaldo|endsaldo|schlusssaldo|kontostand|beginsaldo|eindsaldo|ingående saldo|utgående saldo` +
	`|(?:sub)?totals?\b(?:\s*(?:debits?|credits?|amount|payments|in|out|for\b.*|:.*))?\s*$` +
	`|sum\s*(?:total)?\s*$)`)

func isBalanceRow(r []string, m mapping) bool {
	for i, c := range r {
		if i == m.amount || i == m.debit || i == m.credit || i == m.date {
			continue
		}
		if c != "" && balanceRow.MatchString(c) {
			return true
		}
	}
	return false
}

// apply turns the body's rows into transactions.
func (m mapping) apply(b *builder, rows [][]string) error {
	b.fileCcy = m.fileCcy
	// CR/DR markers on some amounts only: the unmarked ones are the other
	// kind (a card statement marks its credits, a bank its debits).
	crOnly, drOnly := false, false
	if m.amount >= 0 {
		cr, dr, plainUnsigned := 0, 0, 0
		for _, r := range rows {
			a, err := readAmount(cell(r, m.amount), m.sep[m.amount])
			if err != nil {
				continue
			}
			switch {
			case a.mark > 0:
				cr++
			case a.mark < 0:
				dr++
			case !a.signed:
				plainUnsigned++
			}
		}
		crOnly, drOnly = cr > 0 && dr == 0 && plainUnsigned > 0, dr > 0 && cr == 0 && plainUnsigned > 0
		if crOnly {
			b.res.Layout += ", credits marked CR"
		}
		if drOnly {
			b.res.Layout += ", debits marked DR"
		}
	}
	balances, skipped := 0, 0
	for _, r := range rows {
		if isBalanceRow(r, m) {
			balances++
			continue
		}
		dc, ok := splitDate(cell(r, m.date))
		if !ok {
			skipped++
			continue
		}
		var amt *big.Rat
		ccy := ""
		switch {
		case m.amount >= 0:
			a, err := readAmount(cell(r, m.amount), m.sep[m.amount])
			if err != nil {
				skipped++
				continue
			}
			amt, ccy = a.value(), a.ccy
			if a.mark == 0 && !a.signed {
				if crOnly {
					amt.Neg(amt)
				}
			}
			b.dollar = b.dollar || a.dollar
		default:
			d, derr := readAmount(cell(r, m.debit), m.sep[m.debit])
			c, cerr := readAmount(cell(r, m.credit), m.sep[m.credit])
			if derr != nil && cerr != nil {
				skipped++
				continue
			}
			amt = new(big.Rat)
			if cerr == nil {
				amt.Add(amt, new(big.Rat).Abs(c.r))
				ccy = c.ccy
				b.dollar = b.dollar || c.dollar
			}
			if derr == nil {
				amt.Sub(amt, new(big.Rat).Abs(d.r))
				if ccy == "" {
					ccy = d.ccy
				}
				b.dollar = b.dollar || d.dollar
			}
		}
		if m.flip {
			amt.Neg(amt)
		}
		if m.dir >= 0 {
			switch strings.ToUpper(cell(r, m.dir)) {
			case "AF", "D", "DR", "DB", "DEBIT", "S":
				amt.Abs(amt)
				amt.Neg(amt)
			case "BIJ", "C", "CR", "CREDIT", "H":
				amt.Abs(amt)
			}
		}
		if m.currency >= 0 {
			if c := strings.ToUpper(cell(r, m.currency)); isCurrency(c) {
				ccy = c
			}
		}
		desc := ""
		for _, i := range m.desc {
			if desc = strings.Join(strings.Fields(cell(r, i)), " "); desc != "" {
				break
			}
		}
		if err := b.add(rawTxn{date: dc, amt: amt, ccy: ccy, desc: desc}); err != nil {
			return err
		}
	}
	if balances > 0 {
		b.res.Layout += ", " + countOf(balances, "balance or total row") + " left out"
	}
	if skipped > 0 {
		b.warn("skipped %s without a date and an amount", countOf(skipped, "row"))
	}
	return nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
