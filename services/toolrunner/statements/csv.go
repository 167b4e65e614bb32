package statements

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// parseCSV reads a delimited statement: by header names when the file has
// a header, else by what each column holds.
func parseCSV(text string, opts Options) (Result, error) {
	delim, err := sniffDelimiter(text)
	if err != nil {
		return Result{}, err
	}
	rows, err := readRows(text, delim, MaxRows+1)
	if err != nil {
		return Result{}, err
	}
	if len(rows) == 0 {
		return Result{}, unreadable("the file is empty")
	}
	if len(rows) > MaxRows+1 {
		return Result{}, unreadable("more than %d rows", MaxRows)
	}
	var m mapping
	var ok bool
	if isHeader(rows[0]) {
		m, ok = byHeader(rows[0])
		rows = rows[1:]
		if !ok {
			m, err = byContent(rows, opts)
			m.layout = "guessed columns under an unknown header"
			m.guessed = true
		}
	} else {
		m, err = byContent(rows, opts)
	}
	if err != nil {
		return Result{}, err
	}
	return m.apply(rows, opts)
}

func sniffDelimiter(text string) (rune, error) {
	sample := text
	if i := nthIndex(text, '\n', 40); i > 0 {
		sample = text[:i]
	}
	best, bestScore := rune(0), 0.0
	for _, d := range []rune{',', ';', '\t', '|'} {
		rows, err := readRows(sample, d, 40)
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
		for i := range rec {
			rec[i] = strings.TrimSpace(rec[i])
		}
		rows = append(rows, rec)
	}
	return rows, nil
}

// isHeader: a first row with words and no dates or decimal amounts.
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

// mapping says which column holds what.
type mapping struct {
	layout               string
	date, amount         int // -1 when absent
	debit, credit        int
	desc                 []int
	currency, kind, dir  int
	flip                 bool // amounts are from the bank's side (card charges positive)
	order                dateOrder
	guessed, dateGuessed bool
	fixedCurrency        string
}

func noMapping() mapping {
	return mapping{date: -1, amount: -1, debit: -1, credit: -1, currency: -1, kind: -1, dir: -1}
}

var headerNames = map[string][]string{
	"date":     {"transaction date", "booking date", "posted date", "posting date", "date", "datum", "buchungsdatum", "fecha"},
	"amount":   {"amount", "gross", "betrag", "montant", "importe", "bedrag", "value"},
	"debit":    {"debit", "withdrawal", "withdrawals", "paid out", "money out", "debit amount"},
	"credit":   {"credit", "deposit", "deposits", "paid in", "money in", "credit amount"},
	"desc":     {"description", "details", "name", "payee", "narrative", "memo", "label", "text", "merchant", "reference", "item title"},
	"currency": {"currency", "ccy", "curr", "currency code"},
}

func byHeader(h []string) (mapping, bool) {
	m := noMapping()
	norm := make([]string, len(h))
	for i, c := range h {
		norm[i] = strings.ToLower(strings.Trim(c, " \"'"))
	}
	find := func(key string) int {
		for _, want := range headerNames[key] {
			for i, c := range norm {
				if c == want {
					return i
				}
			}
		}
		for _, want := range headerNames[key] {
			for i, c := range norm {
				if strings.Contains(c, want) && !strings.Contains(c, "balance") && !strings.Contains(c, "value date") {
					return i
				}
			}
		}
		return -1
	}
	m.date, m.amount, m.debit, m.credit, m.currency = find("date"), find("amount"), find("debit"), find("credit"), find("currency")
	if m.amount >= 0 && (m.amount == m.debit || m.amount == m.credit) {
		m.debit, m.credit = -1, -1
	}
	if d := find("desc"); d >= 0 {
		m.desc = []int{d}
	}
	m.layout = "header: " + strings.Join(h[:min(len(h), 8)], ", ")
	return m, m.date >= 0 && (m.amount >= 0 || (m.debit >= 0 && m.credit >= 0))
}

// colStats is what one column holds across rows.
type colStats struct {
	cells, nonEmpty, dates, amounts, decimals, moneyish, digitsOnly int
	letters, wordiness                                              float64
	values                                                          []string
}

var reDigits = regexp.MustCompile(`^[0-9]+$`)

// maxMoneyColumns bounds the search for balance and debit/credit columns
// (cubic in their number); statements have a handful.
const maxMoneyColumns = 8

// maxColumns is the widest row read (PayPal's export has 41).
const maxColumns = 128

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
			if v, dec, err := parseAmount(c); err == nil {
				s.amounts++
				if dec {
					s.decimals++
				}
				if dec || v == 0 {
					s.moneyish++
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
	}
	return cols
}

// moneyColumn: every non-empty cell an amount, and the non-zero ones
// written with decimals (so account numbers and references do not count).
func (s colStats) moneyColumn() bool {
	return s.nonEmpty > 0 && s.amounts == s.nonEmpty && s.moneyish == s.nonEmpty && s.decimals > 0
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

var reISO = regexp.MustCompile(`^[A-Z]{3}$`)

// byContent maps a headerless file by what its columns hold.
func byContent(rows [][]string, opts Options) (mapping, error) {
	m := noMapping()
	if len(rows) == 0 {
		return m, unreadable("no rows")
	}
	cols := stats(rows)
	var money []int
	for i, c := range cols {
		switch {
		case m.date < 0 && c.dateColumn():
			m.date = i
		case c.dateColumn():
			// a second date column (value date, process date): not needed
		case c.moneyColumn():
			money = append(money, i)
		case valuesIn(c, "AF", "BIJ", "D", "C", "DR", "CR"):
			m.dir = i
		case valuesIn(c, "DEBIT", "CREDIT", "CHECK", "DEP", "DIRECTDEBIT", "ATM", "POS", "FEE", "XFER", "PAYMENT"):
			m.kind = i
		case c.nonEmpty > 0 && allMatch(c.values, reISO):
			m.currency = i
		}
	}
	if m.date < 0 {
		return m, unreadable("no column of dates")
	}
	switch {
	case len(money) == 0:
		return m, unreadable("no column of amounts")
	case len(money) == 1:
		m.amount = money[0]
		m.layout = "date and amount columns"
	case len(money) > maxMoneyColumns:
		m.amount, m.layout, m.guessed = money[0], "guessed the first of many amount columns", true
	default:
		if a, ok := balanceDifference(rows, money); ok {
			m.amount, m.layout = a, "amount with balances before and after"
		} else if d, c, ok := debitCredit(rows, money); ok {
			m.debit, m.credit, m.layout = d, c, "debit and credit columns"
		} else if a, ok := besideRunningBalance(rows, money); ok {
			m.amount, m.layout = a, "amount beside a running balance"
		} else {
			m.amount, m.layout, m.guessed = money[0], "guessed the first of several amount columns", true
		}
	}
	// Description: the remaining columns by how many letters they hold
	// across rows; apply takes the first one a row fills.
	type ranked struct {
		col   int
		score float64
	}
	var texts []ranked
	for i, c := range cols {
		if i == m.date || i == m.amount || i == m.debit || i == m.credit || i == m.dir || i == m.kind || i == m.currency || slices.Contains(money, i) || c.letters == 0 {
			continue
		}
		texts = append(texts, ranked{i, c.wordiness / float64(len(rows))})
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
	if len(m.desc) == 0 {
		m.guessed = true
	}
	if m.kind >= 0 && m.amount >= 0 {
		// Card exports that write purchases as positive DEBITs are from the
		// bank's side: flip them to the holder's.
		pos, neg := 0, 0
		for _, r := range rows {
			if len(r) <= max(m.kind, m.amount) || !strings.EqualFold(r[m.kind], "DEBIT") {
				continue
			}
			if v, _, err := parseAmount(r[m.amount]); err == nil {
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
	return m, nil
}

func allMatch(vs []string, re *regexp.Regexp) bool {
	for _, v := range vs {
		if v != "" && !re.MatchString(v) {
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
			debits, credits := 0, 0
			for _, r := range rows {
				dv, cv := amountAt(r, d), amountAt(r, c)
				if (dv == 0) == (cv == 0) {
					all = false
					break
				}
				if dv != 0 {
					debits++
				} else {
					credits++
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

// apply turns rows into transactions with the mapping.
func (m mapping) apply(rows [][]string, opts Options) (Result, error) {
	res := Result{Format: "csv", Layout: m.layout}
	currency := opts.DefaultCurrency
	if m.currency < 0 {
		for _, r := range rows {
			for _, i := range []int{m.amount, m.debit, m.credit} {
				if c := currencyOf(cell(r, i)); c != "" {
					currency = c
				}
			}
		}
	}
	var cells []dateCell
	for _, r := range rows {
		if c, ok := splitDate(cell(r, m.date)); ok {
			cells = append(cells, c)
		}
	}
	order, ambiguous := orderOf(cells, currency)
	if order == 0 {
		return Result{}, unreadable("the dates are written in more than one order")
	}
	if ambiguous {
		res.Warnings = append(res.Warnings, "could not tell day from month in the dates; read them as "+map[dateOrder]string{dmy: "day/month", mdy: "month/day"}[order])
	}
	skipped := 0
	for _, r := range rows {
		dc, ok := splitDate(cell(r, m.date))
		date, ok2 := dc.format(order)
		if !ok || !ok2 {
			skipped++
			continue
		}
		var amt int64
		switch {
		case m.amount >= 0:
			v, _, err := parseAmount(cell(r, m.amount))
			if err != nil {
				skipped++
				continue
			}
			amt = v
		default:
			d, _, derr := parseAmount(cell(r, m.debit))
			c, _, cerr := parseAmount(cell(r, m.credit))
			if derr != nil && cerr != nil {
				skipped++
				continue
			}
			amt = abs(c) - abs(d)
		}
		if m.flip {
			amt = -amt
		}
		if m.dir >= 0 {
			switch strings.ToUpper(cell(r, m.dir)) {
			case "AF", "D", "DR":
				amt = -abs(amt)
			case "BIJ", "C", "CR":
				amt = abs(amt)
			}
		}
		cur := currency
		if m.currency >= 0 && reISO.MatchString(cell(r, m.currency)) {
			cur = cell(r, m.currency)
		}
		desc := ""
		for _, i := range m.desc {
			if desc = strings.Join(strings.Fields(cell(r, i)), " "); desc != "" {
				break
			}
		}
		t := Txn{Date: date, AmountMinor: amt, Currency: cur, Description: desc}
		if m.guessed {
			t.NeedsReview, t.ReviewReason = true, "the statement's layout was guessed"
		} else if ambiguous {
			t.NeedsReview, t.ReviewReason = true, "the date's day and month could be either way round"
		}
		res.Transactions = append(res.Transactions, t)
	}
	if skipped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("skipped %d row(s) without a date and an amount", skipped))
	}
	return res, nil
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
