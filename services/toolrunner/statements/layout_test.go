package statements

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// The layout cases are statements made here in the shapes banks print
// them, which a header alone does not read: no header at all, German
// Soll/Haben and trailing signs, UK paid in before paid out, US sections
// with dates without a year, a Singapore card statement with CR credits,
// two cards and amounts abroad, and a long statement whose balances must
// chain through wraps, same-day rows and figures printed off their column.

// layoutWant is what a user would check: how many, their signed total,
// the currency, and the first and last dates.
type layoutWant struct {
	count       int
	sum         int64
	ccy         string
	first, last string
}

// money writes minor units as "1,234.56" (sep ',' and dec '.') or
// "1.234,56".
func money(v int64, group, dec string) string {
	if v < 0 {
		v = -v
	}
	whole := fmt.Sprint(v / 100)
	var parts []string
	for len(whole) > 3 {
		parts = append([]string{whole[len(whole)-3:]}, parts...)
		whole = whole[:len(whole)-3]
	}
	parts = append([]string{whole}, parts...)
	return strings.Join(parts, group) + dec + fmt.Sprintf("%02d", v%100)
}

func ukMoney(v int64) string { return money(v, ",", ".") }
func deMoney(v int64) string { return money(v, ".", ",") }

type genRow struct {
	day  time.Time
	desc []string
	amt  int64 // signed, the account holder's side
}

// someRows makes n rows from day on, two a day, every third over two
// lines, every fifth money in.
func someRows(n int, day time.Time, seed int) []genRow {
	var rows []genRow
	for i := range n {
		amt := -int64(150 + (i*seed*37)%8000)
		desc := []string{fmt.Sprintf("CARD PAYMENT TO SHOP %d", (i*seed)%89)}
		if i%5 == 2 {
			amt = int64(2000 + (i*53)%50000)
			desc = []string{"TRANSFER FROM J SMITH"}
		}
		if i%3 == 0 {
			desc = append(desc, fmt.Sprintf("REF %06d", 1000+i*7))
		}
		rows = append(rows, genRow{day: day.AddDate(0, 0, i/2), desc: desc, amt: amt})
	}
	return rows
}

func wantOf(rows []genRow, ccy string) layoutWant {
	w := layoutWant{count: len(rows), ccy: ccy, first: rows[0].day.Format(time.DateOnly), last: rows[len(rows)-1].day.Format(time.DateOnly)}
	for _, r := range rows {
		w.sum += r.amt
	}
	return w
}

// genNoHeader: a current account with no header line; paid out, paid in
// and balance columns; the date on each row.
func genNoHeader() ([]byte, layoutWant) {
	rows := someRows(24, time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC), 3)
	w := newStmt()
	w.at(50, "Current Account Statement").nl().at(50, "Sort code 12-34-56  Account 12345678  Currency GBP").nl().gap(20)
	bal := int64(250000)
	w.at(50, "01 Mar 2024").at(120, "Balance brought forward").right(530, ukMoney(bal)).nl()
	for _, r := range rows {
		bal += r.amt
		w.at(50, r.day.Format("02 Jan 2006")).at(120, r.desc[0])
		if r.amt < 0 {
			w.right(380, ukMoney(r.amt))
		} else {
			w.right(450, ukMoney(r.amt))
		}
		w.right(530, ukMoney(bal)).nl()
		for _, d := range r.desc[1:] {
			w.at(120, d).nl()
		}
	}
	w.at(50, "31 Mar 2024").at(120, "Balance carried forward").right(530, ukMoney(bal)).nl()
	return w.pdf(), wantOf(rows, "GBP")
}

// genGermanSollHaben: Buchungstag, Valuta, Vorgang, Soll, Haben; dates
// without a year; each booking over three lines; the old and new balance
// with S/H.
func genGermanSollHaben() ([]byte, layoutWant) {
	rows := someRows(18, time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), 5)
	w := newStmt()
	w.at(50, "Kontoauszug Nr. 1/2024 vom 31.01.2024").nl().at(50, "Girokonto 1234567890  IBAN DE89 3704 0044 0532 0130 00  EUR").nl().gap(20)
	w.at(50, "Buchungstag").at(110, "Valuta").at(170, "Vorgang").at(400, "Soll").at(480, "Haben").nl()
	bal := int64(123456)
	w.at(170, "Alter Kontostand vom 29.12.2023").right(510, deMoney(bal)+" H").nl()
	for _, r := range rows {
		bal += r.amt
		d := r.day.Format("02.01.")
		w.at(50, d).at(110, d).at(170, map[bool]string{true: "Lastschrift", false: "Gutschrift"}[r.amt < 0])
		if r.amt < 0 {
			w.right(430, deMoney(r.amt))
		} else {
			w.right(510, deMoney(r.amt))
		}
		w.nl()
		for _, d := range r.desc {
			w.at(170, d).nl()
		}
	}
	w.at(170, "Neuer Kontostand vom 31.01.2024").right(510, deMoney(bal)+map[bool]string{true: " S", false: " H"}[bal < 0]).nl()
	return w.pdf(), wantOf(rows, "EUR")
}

// genGermanSigned: Bu-Tag, Wert, Vorgang, Betrag, with a trailing minus
// or plus, over two pages without a header on the second.
func genGermanSigned() ([]byte, layoutWant) {
	rows := someRows(30, time.Date(2023, 12, 18, 0, 0, 0, 0, time.UTC), 7)
	w := newStmt()
	w.at(50, "Kontoauszug vom 15.01.2024  Währung EUR").nl().gap(20)
	w.at(50, "Bu-Tag").at(100, "Wert").at(150, "Vorgang").right(530, "Betrag").nl()
	bal := int64(500000)
	w.at(150, "Alter Kontostand").right(530, deMoney(bal)+"+").nl()
	for i, r := range rows {
		if i == 16 {
			w.page()
		}
		bal += r.amt
		d := r.day.Format("02.01.")
		sign := map[bool]string{true: "-", false: "+"}[r.amt < 0]
		w.at(50, d).at(100, d).at(150, r.desc[0]).right(530, deMoney(r.amt)+sign).nl()
		for _, d := range r.desc[1:] {
			w.at(150, d).nl()
		}
	}
	w.at(150, "Neuer Kontostand").right(530, deMoney(bal)+"+").nl()
	return w.pdf(), wantOf(rows, "EUR")
}

// genUKSavings: Date, Description, Money in, Money out, Balance (in
// before out), the date once a day, an opening and a closing balance.
func genUKSavings() ([]byte, layoutWant) {
	rows := someRows(20, time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), 11)
	w := newStmt()
	w.at(50, "Easy Saver statement  1 May 2024 to 31 May 2024").nl().gap(20)
	w.at(50, "Date").at(110, "Description").right(380, "Money in").right(450, "Money out").right(530, "Balance").nl()
	bal := int64(1000000)
	w.at(110, "Opening balance").right(530, "£"+ukMoney(bal)).nl()
	var prev time.Time
	for _, r := range rows {
		bal += r.amt
		if !r.day.Equal(prev) {
			w.at(50, r.day.Format("2 Jan"))
		}
		prev = r.day
		w.at(110, r.desc[0])
		if r.amt > 0 {
			w.right(380, "£"+ukMoney(r.amt))
		} else {
			w.right(450, "£"+ukMoney(r.amt))
		}
		w.right(530, "£"+ukMoney(bal)).nl()
		for _, d := range r.desc[1:] {
			w.at(110, d).nl()
		}
	}
	w.at(110, "Closing balance").right(530, "£"+ukMoney(bal)).nl()
	return w.pdf(), wantOf(rows, "GBP")
}

// genUSFintech: a summary box, then sections "Deposits and other
// additions" and "Withdrawals and other subtractions", each with its own
// header; dates "01/05" and "Jan 12" without a year, which runs from
// December into January; amounts "$1,234.56" and "-$12.34".
func genUSFintech() ([]byte, layoutWant) {
	start := time.Date(2023, 12, 15, 0, 0, 0, 0, time.UTC)
	var dep, wd []genRow
	for i := range 6 {
		dep = append(dep, genRow{day: start.AddDate(0, 0, i*5+1), desc: []string{fmt.Sprintf("ACH DEPOSIT PAYROLL %d", i)}, amt: int64(65000 + i*1234)})
	}
	for i := range 14 {
		r := genRow{day: start.AddDate(0, 0, i*2+2), desc: []string{fmt.Sprintf("DEBIT CARD PURCHASE MERCHANT %d", i)}, amt: -int64(2234 + i*977)}
		if i%4 == 1 {
			r.desc = append(r.desc, "CARD 1234 PURCHASE AUTHORIZED ON "+r.day.Format("01/02"))
		}
		wd = append(wd, r)
	}
	open := int64(250000)
	in, out := int64(0), int64(0)
	for _, r := range dep {
		in += r.amt
	}
	for _, r := range wd {
		out += r.amt
	}
	w := newStmt()
	w.at(50, "Checking Account Statement").nl().at(50, "December 15, 2023 - January 14, 2024").nl().gap(12)
	w.at(50, "Beginning balance on December 15, 2023").right(530, "$"+ukMoney(open)).nl()
	w.at(50, "Deposits and other additions").right(530, "$"+ukMoney(in)).nl()
	w.at(50, "Withdrawals and other subtractions").right(530, "-$"+ukMoney(out)).nl()
	w.at(50, "Ending balance on January 14, 2024").right(530, "$"+ukMoney(open+in+out)).nl().gap(20)
	w.at(50, "Deposits and other additions").nl()
	w.at(50, "Date").at(110, "Description").right(530, "Amount").nl()
	for _, r := range dep {
		w.at(50, r.day.Format("01/02")).at(110, r.desc[0]).right(530, "$"+ukMoney(r.amt)).nl()
	}
	w.at(50, "Total deposits and other additions").right(530, "$"+ukMoney(in)).nl().gap(20)
	w.at(50, "Withdrawals and other subtractions").nl()
	w.at(50, "Date").at(110, "Description").right(530, "Amount").nl()
	for i, r := range wd {
		a := "-$" + ukMoney(r.amt)
		if i%3 == 0 {
			a = "$" + ukMoney(r.amt) // unsigned: the section says which way
		}
		w.at(50, r.day.Format("Jan 2")).at(110, r.desc[0]).right(530, a).nl()
		for _, d := range r.desc[1:] {
			w.at(110, d).nl()
		}
	}
	w.at(50, "Total withdrawals and other subtractions").right(530, "-$"+ukMoney(out)).nl()
	all := append(append([]genRow{}, dep...), wd...)
	want := wantOf(all, "USD")
	want.first, want.last = "2023-12-16", "2024-01-12"
	return w.pdf(), want
}

// genSGCard: a card statement for two cards under one balance: post and
// transaction dates "05 JAN" without a year, charges as plain figures,
// payments and refunds marked CR, descriptions over two lines, and
// purchases abroad showing the original amount in its currency.
func genSGCard() ([]byte, layoutWant) {
	type cardRow struct {
		post, trans string
		desc        []string
		amt         int64 // as the issuer prints it: a charge positive
		cr          bool
	}
	cards := [][]cardRow{
		{
			{"28 DEC", "26 DEC", []string{"GRAB*RIDE SINGAPORE SG"}, 1250, false},
			{"02 JAN", "31 DEC", []string{"AMAZON.COM SEATTLE US", "USD 25.00"}, 3410, false},
			{"03 JAN", "03 JAN", []string{"PAYMENT - THANK YOU"}, 50000, true},
			{"05 JAN", "04 JAN", []string{"NTUC FAIRPRICE", "SINGAPORE SG"}, 8765, false},
			{"09 JAN", "08 JAN", []string{"HOTEL BOOKING LONDON GB", "GBP 120.00"}, 20744, false},
			{"12 JAN", "11 JAN", []string{"REFUND SHOPEE SG"}, 1999, true},
		},
		{
			{"30 DEC", "29 DEC", []string{"NETFLIX.COM"}, 1998, false},
			{"04 JAN", "03 JAN", []string{"COLD STORAGE", "SINGAPORE SG"}, 4520, false},
			{"15 JAN", "14 JAN", []string{"SHELL SINGAPORE"}, 9000, false},
		},
	}
	prev := int64(50000)
	due := prev
	var want layoutWant
	w := newStmt()
	w.at(50, "CREDIT CARD STATEMENT").nl().at(50, "STATEMENT DATE 20 JAN 2024").at(300, "PAYMENT DUE DATE 09 FEB 2024").nl()
	w.at(50, "CREDIT LIMIT").right(250, "SGD 10,000.00").at(300, "MINIMUM PAYMENT").right(530, "SGD 50.00").nl().gap(20)
	w.at(50, "POST DATE").at(110, "TRANS DATE").at(170, "DESCRIPTION").right(530, "AMOUNT (SGD)").nl()
	w.at(170, "PREVIOUS BALANCE").right(530, ukMoney(prev)).nl()
	for ci, rows := range cards {
		w.gap(6).at(50, fmt.Sprintf("VISA PLATINUM 4111-XXXX-XXXX-%d111 TAN AH KOW", ci+1)).nl()
		for _, r := range rows {
			a := ukMoney(r.amt)
			v := -r.amt
			if r.cr {
				a += " CR"
				v = r.amt
			}
			due -= v
			want.count++
			want.sum += v
			w.at(50, r.post).at(110, r.trans).at(170, r.desc[0]).right(530, a).nl()
			for _, d := range r.desc[1:] {
				w.at(170, d).nl()
			}
		}
		w.at(170, "SUB-TOTAL").right(530, ukMoney(0)).nl()
	}
	w.at(170, "TOTAL AMOUNT DUE").right(530, ukMoney(due)).nl()
	w.gap(30).at(50, "Please pay by 09 FEB 2024. All amounts in SGD.").nl()
	want.ccy, want.first, want.last = "SGD", "2023-12-26", "2024-01-14"
	return w.pdf(), want
}

// genLong: 138 rows over several pages, UK style (the date once a day,
// descriptions over two lines, paid out, paid in, balance), with a header
// on each page and balances carried between them; a few amounts sit a
// little off their column and some far enough off to be read as text.
func genLong() ([]byte, layoutWant) {
	rows := someRows(138, time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC), 13)
	w := newStmt()
	bal := int64(300000)
	header := func() {
		w.at(50, "Your current account").nl().gap(10)
		w.at(50, "Date").at(110, "Payment type and details").right(380, "Paid out").right(450, "Paid in").right(530, "Balance").nl()
		w.at(110, "BALANCE BROUGHT FORWARD").right(530, ukMoney(bal)).nl()
	}
	header()
	var prev time.Time
	for i, r := range rows {
		if w.y < 90 {
			w.at(110, "BALANCE CARRIED FORWARD").right(530, ukMoney(bal)).nl()
			w.page()
			header()
			prev = time.Time{}
		}
		bal += r.amt
		if !r.day.Equal(prev) {
			w.at(50, r.day.Format("02 Jan 06"))
		}
		prev = r.day
		for _, d := range r.desc[:len(r.desc)-1] {
			w.at(110, d).nl()
		}
		w.at(110, r.desc[len(r.desc)-1])
		off := 0.0
		switch i % 23 {
		case 5:
			off = -6 // a little off
		case 11:
			off = -40 // far off: into the text
		}
		if r.amt < 0 {
			w.right(380+off, ukMoney(r.amt))
		} else {
			w.right(450+off, ukMoney(r.amt))
		}
		if i%2 == 1 || i == len(rows)-1 {
			w.right(530, ukMoney(bal))
		}
		w.nl()
	}
	w.at(110, "BALANCE CARRIED FORWARD").right(530, ukMoney(bal)).nl()
	w.gap(20).at(50, "Account currency GBP").nl()
	return w.pdf(), wantOf(rows, "GBP")
}

// genTwoAccounts: a current and a savings account in one file, each
// with its own opening and closing balance and running balance, no
// header, amounts signed in one column.
func genTwoAccounts() ([]byte, layoutWant) {
	w := newStmt()
	w.at(50, "Combined statement  1 June 2024 to 30 June 2024  Currency EUR").nl().gap(20)
	var all []genRow
	for k, name := range []string{"Current account 1234", "Savings account 5678"} {
		rows := someRows(10+k*4, time.Date(2024, 6, 3+k, 0, 0, 0, 0, time.UTC), 17+k)
		all = append(all, rows...)
		bal := int64(100000 * (k + 1))
		w.gap(10).at(50, name).nl()
		w.at(120, "Opening balance").right(530, ukMoney(bal)).nl()
		for _, r := range rows {
			bal += r.amt
			a := ukMoney(r.amt)
			if r.amt < 0 {
				a = "-" + a
			}
			w.at(50, r.day.Format("02/01/2006")).at(120, r.desc[0]).right(450, a).right(530, ukMoney(bal)).nl()
			for _, d := range r.desc[1:] {
				w.at(120, d).nl()
			}
		}
		w.at(120, "Closing balance").right(530, ukMoney(bal)).nl()
	}
	return w.pdf(), wantOf(all, "EUR")
}

var layoutCases = []struct {
	name string
	gen  func() ([]byte, layoutWant)
}{
	{"no header", genNoHeader},
	{"German Soll/Haben", genGermanSollHaben},
	{"German trailing signs", genGermanSigned},
	{"UK savings money in before out", genUKSavings},
	{"US fintech sections", genUSFintech},
	{"SG credit card", genSGCard},
	{"138 rows over pages", genLong},
	{"two accounts", genTwoAccounts},
}

func checkLayoutResult(t *testing.T, r Result, want layoutWant) {
	t.Helper()
	got := layoutWant{count: len(r.Transactions), first: "9999", last: ""}
	ccys := map[string]bool{}
	for _, tx := range r.Transactions {
		got.sum += tx.AmountMinor
		ccys[tx.Currency] = true
		got.first, got.last = min(got.first, tx.Date), max(got.last, tx.Date)
		if tx.Description == "" {
			t.Errorf("a transaction without a description: %+v", tx)
		}
		if tx.NeedsReview {
			t.Errorf("flagged: %+v", tx)
		}
	}
	if len(ccys) == 1 {
		for c := range ccys {
			got.ccy = c
		}
	}
	if got != want {
		t.Errorf("got %+v\nwant %+v\nlayout %q warnings %q uncertain %q", got, want, r.Layout, r.Warnings, r.Uncertain)
	}
}

func TestLayoutCases(t *testing.T) {
	for _, tt := range layoutCases {
		t.Run(tt.name, func(t *testing.T) {
			data, want := tt.gen()
			r, err := Parse("statement.pdf", data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			checkLayoutResult(t, r, want)
		})
	}
}

// TestLayoutFindsRowsOffTheirColumn: the rows printed too far from their
// column to be placed are found from the balances around them, and said.
func TestLayoutFindsRowsOffTheirColumn(t *testing.T) {
	data, want := genLong()
	lines, _, err := pdfLines(data)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := layoutFromLines(lines, Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkLayoutResult(t, lr.res, want)
	if !slices.ContainsFunc(lr.res.Warnings, func(w string) bool { return strings.HasPrefix(w, "6 transactions printed off their column") }) {
		t.Errorf("warnings %q do not say 6 rows were found", lr.res.Warnings)
	}
}

// TestLayoutReadsHeaderedTables: the layout reading alone, without the
// header's, reads the tables the header reading does.
func TestLayoutReadsHeaderedTables(t *testing.T) {
	data, count, sum := genPDF(2, 30) // genPDF writes no negative balances
	lines, _, err := pdfLines(data)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := layoutFromLines(lines, Options{DefaultCurrency: "GBP"})
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	for _, tx := range lr.res.Transactions {
		got += tx.AmountMinor
	}
	if len(lr.res.Transactions) != count || got != sum || !lr.checked || lr.flagged != 0 {
		t.Fatalf("%d transactions summing %d (checked %v, flagged %d), want %d summing %d; layout %q",
			len(lr.res.Transactions), got, lr.checked, lr.flagged, count, sum, lr.res.Layout)
	}
	if d := lr.res.Transactions[0].Description; d != "TRANSFER FROM SAVINGS LONDON GB" {
		t.Fatalf("a description over two lines read as %q", d)
	}
}
