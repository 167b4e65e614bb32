package statements

import (
	"fmt"
	"strings"
	"testing"
)

// Each rule for columns and values, on a small file written for it.

type want struct {
	count int
	sum   map[string]int64
	from  string
	to    string
}

func check(t *testing.T, name, data string, opts Options, w want) Result {
	t.Helper()
	r, err := Parse(name, []byte(data), opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	sums := map[string]int64{}
	from, to := "9999", ""
	for _, tx := range r.Transactions {
		sums[tx.Currency] += tx.AmountMinor
		from, to = min(from, tx.Date), max(to, tx.Date)
		if tx.Description == "" {
			t.Errorf("%s: empty description in %+v", name, tx)
		}
	}
	if len(r.Transactions) != w.count || fmt.Sprint(sums) != fmt.Sprint(w.sum) || (w.from != "" && (from != w.from || to != w.to)) {
		t.Fatalf("%s: %d transactions, sums %v, dates %s..%s; want %d, %v, %s..%s (layout %q, warnings %q)\n%+v",
			name, len(r.Transactions), sums, from, to, w.count, w.sum, w.from, w.to, r.Layout, r.Warnings, r.Transactions)
	}
	return r
}

func gbp(v int64) map[string]int64 { return map[string]int64{"GBP": v} }

func TestRuleDateColumnBookingOverValueOrInitial(t *testing.T) {
	for _, hdr := range []string{"Initial Date,Transaction Date,Description,Amount", "Value Date,Booking Date,Description,Amount",
		"Transaction Date,Value Date,Description,Amount"} {
		cols := strings.Split(hdr, ",")
		rows := "2024-03-01,2024-03-05,SHOP,-10.00\n2024-03-02,2024-03-06,CAFE,-2.00\n"
		if strings.HasPrefix(hdr, "Transaction") {
			rows = "2024-03-05,2024-03-01,SHOP,-10.00\n2024-03-06,2024-03-02,CAFE,-2.00\n"
		}
		t.Run(cols[0], func(t *testing.T) {
			check(t, "dates.csv", hdr+"\n"+rows, Options{DefaultCurrency: "GBP"}, want{2, gbp(-1200), "2024-03-05", "2024-03-06"})
		})
	}
}

func TestRuleDayMonthOrderFromTheWholeFile(t *testing.T) {
	// A day over 12 on the last row settles day/month for every row.
	var b strings.Builder
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "%02d/03/2024,SHOP %d,-1.00\n", i, i)
	}
	b.WriteString("25/03/2024,SHOP 25,-1.00\n")
	r := check(t, "dmy.csv", b.String(), Options{DefaultCurrency: "GBP", DateOrder: "mdy"}, want{13, gbp(-1300), "2024-03-01", "2024-03-25"})
	if r.DateOrder != "" {
		t.Errorf("the file settled the order, yet it is reported as taken: %q", r.DateOrder)
	}
	// A month-first file: 04/13 settles it.
	check(t, "mdy.csv", "04/01/2024,A,-1.00\n04/13/2024,B,-1.00\n", Options{DefaultCurrency: "USD", DateOrder: "dmy"},
		want{2, map[string]int64{"USD": -200}, "2024-04-01", "2024-04-13"})

	// Nothing settles it: the caller's default (the user's locale) is
	// taken and the reading is reported.
	us := "Date,Description,Amount\n12/04/2009,BANK FEE,-5.00\n"
	r = check(t, "us.csv", us, Options{DefaultCurrency: "USD", DateOrder: "en-US"}, want{1, map[string]int64{"USD": -500}, "2009-12-04", "2009-12-04"})
	if r.DateOrder != "month/day" || !strings.Contains(strings.Join(r.Uncertain, ";"), "month/day (your default)") {
		t.Errorf("date order %q, uncertain %q", r.DateOrder, r.Uncertain)
	}
	r = check(t, "uk.csv", us, Options{DefaultCurrency: "GBP", DateOrder: "dmy"}, want{1, gbp(-500), "2009-04-12", "2009-04-12"})
	if r.DateOrder != "day/month" || r.Transactions[0].NeedsReview {
		t.Errorf("date order %q, review %v", r.DateOrder, r.Transactions[0].NeedsReview)
	}
	// With no default at all, the guess is flagged on every row.
	r = check(t, "none.csv", us, Options{DefaultCurrency: "GBP"}, want{1, gbp(-500), "2009-04-12", "2009-04-12"})
	if !r.Transactions[0].NeedsReview {
		t.Error("a guessed date order was not flagged for review")
	}
}

func TestRuleDebitCreditAndSigns(t *testing.T) {
	opts := Options{DefaultCurrency: "GBP"}
	t.Run("debit and credit columns", func(t *testing.T) {
		check(t, "dc.csv", "Date,Details,Paid out,Paid in,Balance\n01/03/2024,SHOP,12.00,,88.00\n02/03/2024,SALARY,,100.00,188.00\n", opts,
			want{2, gbp(8800), "2024-03-01", "2024-03-02"})
	})
	t.Run("parentheses", func(t *testing.T) {
		check(t, "paren.csv", "Date,Description,Amount\n2024-03-01,SHOP,(12.00)\n2024-03-02,REFUND,5.00\n", opts, want{2, gbp(-700), "2024-03-01", "2024-03-02"})
	})
	t.Run("CR marks credits", func(t *testing.T) {
		check(t, "cr.csv", "Date,Description,Amount\n2024-03-01,SHOP,12.00\n2024-03-02,PAYMENT THANK YOU,100.00CR\n2024-03-03,CAFE,3.00\n", opts,
			want{3, gbp(8500), "2024-03-01", "2024-03-03"})
	})
	t.Run("DR marks debits", func(t *testing.T) {
		check(t, "dr.csv", "Date,Description,Amount\n2024-03-01,SHOP,12.00 DR\n2024-03-02,SALARY,100.00\n", opts, want{2, gbp(8800), "2024-03-01", "2024-03-02"})
	})
	t.Run("D/C direction column", func(t *testing.T) {
		check(t, "dir.csv", "Date,Description,Amount,D/C\n2024-03-01,SHOP,12.00,D\n2024-03-02,SALARY,100.00,C\n", opts, want{2, gbp(8800), "2024-03-01", "2024-03-02"})
	})
	t.Run("DR/CR direction column", func(t *testing.T) {
		check(t, "drcr.csv", "2024-03-01;SHOP;12,00;DR\n2024-03-02;SALARY;100,00;CR\n", opts, want{2, gbp(8800), "2024-03-01", "2024-03-02"})
	})
	t.Run("signed amount", func(t *testing.T) {
		check(t, "signed.csv", "Date,Description,Amount\n2024-03-01,SHOP,-12.00\n2024-03-02,SALARY,+100.00\n", opts, want{2, gbp(8800), "2024-03-01", "2024-03-02"})
	})
}

func TestRuleDescriptionColumn(t *testing.T) {
	for _, name := range []string{"Summary", "Details", "Narrative", "Payee", "Verwendungszweck"} {
		t.Run(name, func(t *testing.T) {
			data := "Date,Ref," + name + ",Amount\n2024-03-01,123456,TESCO STORES,-12.00\n"
			r := check(t, "desc.csv", data, Options{DefaultCurrency: "GBP"}, want{1, gbp(-1200), "2024-03-01", "2024-03-01"})
			if r.Transactions[0].Description != "TESCO STORES" {
				t.Fatalf("description %q", r.Transactions[0].Description)
			}
		})
	}
}

func TestRuleBalanceRowsAreNotTransactions(t *testing.T) {
	for _, row := range []string{"Saldo Anterior", "Opening balance", "Balance brought forward", "BALANCE CARRIED FORWARD", "Closing Balance", "Total", "Totals", "Saldo final"} {
		t.Run(row, func(t *testing.T) {
			data := "Fecha,Concepto,Importe\n01/03/2024," + row + ",1000.00\n02/03/2024,MERCADONA,-12.00\n03/03/2024,NOMINA,500.00\n"
			check(t, "bal.csv", data, Options{DefaultCurrency: "EUR"}, want{2, map[string]int64{"EUR": 48800}, "2024-03-02", "2024-03-03"})
		})
	}
	// A shop whose name starts with a balance word is still a shop.
	check(t, "shop.csv", "Date,Description,Amount\n2024-03-01,TOTAL ENERGIES STATION 4,-40.00\n", Options{DefaultCurrency: "GBP"}, want{1, gbp(-4000), "2024-03-01", "2024-03-01"})
}

func TestRuleIdenticalLinesAreTwoTransactions(t *testing.T) {
	data := "Date,Description,Amount\n2024-03-01,COSTA COFFEE,-3.00\n2024-03-01,COSTA COFFEE,-3.00\n"
	check(t, "pair.csv", data, Options{DefaultCurrency: "GBP"}, want{2, gbp(-600), "2024-03-01", "2024-03-01"})
}

// The files the issue reports as refused or misread.
func TestRuleIssueFiles(t *testing.T) {
	gb := Options{DefaultCurrency: "GBP", DateOrder: "dmy"}
	t.Run("no header, dates like 07 Nov 2013", func(t *testing.T) {
		check(t, "a.csv", "07 Nov 2013,CARD PAYMENT TESCO,-12.50\n08 Nov 2013,SALARY,1000.00\n", gb, want{2, gbp(98750), "2013-11-07", "2013-11-08"})
	})
	t.Run("three lines of account details before the header", func(t *testing.T) {
		data := "Account Name:,Mr A Test\nAccount Number:,12345678\nSort Code:,12-34-56\nDate,Description,Amount,Balance\n" +
			"01/03/2024,SHOP,-12.00,88.00\n02/03/2024,SALARY,100.00,188.00\n"
		check(t, "b.csv", data, gb, want{2, gbp(8800), "2024-03-01", "2024-03-02"})
	})
	t.Run("dates like 10-Nov-9", func(t *testing.T) {
		check(t, "c.csv", "Date,Description,Amount\n10-Nov-9,SHOP,-12.00\n11-Nov-9,CAFE,-3.00\n", gb, want{2, gbp(-1500), "2009-11-10", "2009-11-11"})
	})
	t.Run("OFX amounts with 16 decimals", func(t *testing.T) {
		ofx := "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKTRANLIST>" +
			"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240301<TRNAMT>-12.3400000000000000<FITID>1<NAME>SHOP</STMTTRN>" +
			"<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>20240302<TRNAMT>-0.1250000000000<FITID>2<NAME>FEE</STMTTRN>" +
			"</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
		r := check(t, "d.ofx", ofx, Options{}, want{2, map[string]int64{"USD": -1246}, "2024-03-01", "2024-03-02"})
		if r.Rounded != 1 || !strings.Contains(strings.Join(r.Uncertain, ";"), "half to even") {
			t.Errorf("rounded %d, uncertain %q", r.Rounded, r.Uncertain)
		}
	})
	t.Run("rows that say DKK", func(t *testing.T) {
		check(t, "e.csv", "Dato;Tekst;Beløb\n01.03.2024;NETTO;-123,45 DKK\n02.03.2024;LØN;1.000,00 DKK\n", gb,
			want{2, map[string]int64{"DKK": 87655}, "2024-03-01", "2024-03-02"})
	})
	t.Run("a DKK column", func(t *testing.T) {
		check(t, "f.csv", "01.03.2024;NETTO;-123,45;DKK\n02.03.2024;LØN;1.000,00;DKK\n", gb, want{2, map[string]int64{"DKK": 87655}, "2024-03-01", "2024-03-02"})
	})
	t.Run("currency in the preamble", func(t *testing.T) {
		check(t, "g.csv", "Konto;1234\nValuta;DKK\n\nDato;Tekst;Beløb\n01.03.2024;NETTO;-123,45\n", gb, want{1, map[string]int64{"DKK": -12345}, "2024-03-01", "2024-03-01"})
	})
	t.Run("a Summary column", func(t *testing.T) {
		r := check(t, "h.csv", "Date,Summary,Amount\n2024-03-01,Coffee at Costa,-3.00\n", gb, want{1, gbp(-300), "2024-03-01", "2024-03-01"})
		if r.Transactions[0].Description != "Coffee at Costa" {
			t.Fatal(r.Transactions[0].Description)
		}
	})
}

func TestRuleEncodingsAndTrailers(t *testing.T) {
	base := "Date;Description;Amount\n01/03/2024;CAFÉ CRÈME;-3,50\n02/03/2024;SALAIRE;1000,00\n"
	utf16le := []byte{0xff, 0xfe}
	for _, r := range base {
		utf16le = append(utf16le, byte(r), byte(r>>8))
	}
	utf16noBOM := utf16le[2:]
	latin1 := []byte{}
	for _, r := range base {
		latin1 = append(latin1, byte(r))
	}
	for name, data := range map[string][]byte{
		"utf-8": []byte(base), "utf-8 bom": append([]byte("\xef\xbb\xbf"), base...), "utf-16le bom": utf16le, "utf-16le": utf16noBOM,
		"latin-1": latin1, "with a trailer": []byte(base + "\nTotal;;996,50\nEnd of statement\n"),
	} {
		t.Run(name, func(t *testing.T) {
			r, err := Parse("enc.csv", data, Options{DefaultCurrency: "EUR", DateOrder: "dmy"})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Transactions) != 2 || r.Transactions[0].Description != "CAFÉ CRÈME" || r.Transactions[0].AmountMinor+r.Transactions[1].AmountMinor != 99650 {
				t.Fatalf("%+v", r.Transactions)
			}
		})
	}
}

func TestMoneyInMinorUnits(t *testing.T) {
	t.Run("JPY has none", func(t *testing.T) {
		check(t, "jpy.csv", "Date,Description,Amount,Currency\n2024-03-01,KONBINI,-1200,JPY\n2024-03-02,SALARY,300000,JPY\n", Options{},
			want{2, map[string]int64{"JPY": 298800}, "2024-03-01", "2024-03-02"})
	})
	t.Run("KWD has three", func(t *testing.T) {
		check(t, "kwd.csv", "Date,Description,Amount,Currency\n2024-03-01,SHOP,-1.250,KWD\n2024-03-02,SALARY,500.000,KWD\n", Options{},
			want{2, map[string]int64{"KWD": 498750}, "2024-03-01", "2024-03-02"})
	})
	t.Run("half to even", func(t *testing.T) {
		r := check(t, "round.csv", "Date,Description,Amount\n2024-03-01,A,-0.125\n2024-03-02,B,-0.135\n2024-03-03,C,-0.1251\n", Options{DefaultCurrency: "EUR"},
			want{3, map[string]int64{"EUR": -12 - 14 - 13}, "2024-03-01", "2024-03-03"})
		if r.Rounded != 3 || !strings.Contains(strings.Join(r.Uncertain, ";"), "3 amounts had more decimals") {
			t.Fatalf("rounded %d, uncertain %q", r.Rounded, r.Uncertain)
		}
	})
}

func TestCurrencyFromTheFileOrTheCaller(t *testing.T) {
	data := "Date,Description,Amount\n2024-03-01,SHOP,-12.00\n"
	r := check(t, "none.csv", data, Options{DefaultCurrency: "SEK"}, want{1, map[string]int64{"SEK": -1200}, "2024-03-01", "2024-03-01"})
	if r.CurrencyFrom != "default" {
		t.Errorf("currency from %q", r.CurrencyFrom)
	}
	// No default and nothing in the file: no currency, and it says so.
	r = check(t, "none.csv", data, Options{}, want{1, map[string]int64{"": -1200}, "2024-03-01", "2024-03-01"})
	if r.CurrencyFrom != "unknown" || !r.Transactions[0].NeedsReview {
		t.Errorf("currency from %q, %+v", r.CurrencyFrom, r.Transactions[0])
	}
	// An unambiguous symbol names it; "$" takes the caller's dollar.
	check(t, "eur.csv", "Date,Description,Amount\n2024-03-01,SHOP,€12.00\n", Options{DefaultCurrency: "GBP"}, want{1, map[string]int64{"EUR": 1200}, "2024-03-01", "2024-03-01"})
	check(t, "cad.csv", "Date,Description,Amount\n2024-03-01,SHOP,-$12.00\n", Options{DefaultCurrency: "CAD"}, want{1, map[string]int64{"CAD": -1200}, "2024-03-01", "2024-03-01"})
	check(t, "usd.csv", "Date,Description,Amount\n2024-03-01,SHOP,-$12.00\n", Options{DefaultCurrency: "GBP"}, want{1, map[string]int64{"USD": -1200}, "2024-03-01", "2024-03-01"})
}

func TestMT940AndQIFAndCamtRules(t *testing.T) {
	mt := ":20:STMT\n:25:DE12345678901234567890\n:28C:1/1\n:60F:C240301EUR100,00\n" +
		":61:2403010301D12,5NMSCNONREF\n:86:?20SHOP?21MUNICH?32ACME GMBH\n" +
		":61:2403020302C50,NTRFNONREF\n:86:SALARY MARCH\n" +
		":61:2403030303RD2,00NMSCNONREF\n:86:REVERSED FEE\n:62F:C240303EUR139,50\n-"
	check(t, "s.sta", mt, Options{}, want{3, map[string]int64{"EUR": 3950}, "2024-03-01", "2024-03-03"})
	qif := "!Type:Bank\nD1/ 5'24\nT-12.50\nPSHOP\n^\nD1/15'24\nT100.00\nPSALARY\n^\n"
	r := check(t, "q.qif", qif, Options{DefaultCurrency: "USD", DateOrder: "mdy"}, want{2, map[string]int64{"USD": 8750}, "2024-01-05", "2024-01-15"})
	if r.DateOrder != "" {
		t.Errorf("1/15 settles the order, yet %q", r.DateOrder)
	}
	camt := `<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>` +
		`<Stmt><Acct><Id><IBAN>DE1</IBAN></Id><Ccy>EUR</Ccy></Acct>` +
		`<Ntry><Amt Ccy="EUR">10.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2024-03-01</Dt></BookgDt><ValDt><Dt>2024-03-04</Dt></ValDt>` +
		`<NtryDtls><TxDtls><RltdPties><Cdtr><Pty><Nm>SHOP</Nm></Pty></Cdtr></RltdPties></TxDtls></NtryDtls></Ntry>` +
		`<Ntry><Amt Ccy="EUR">5.00</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts><Cd>PDNG</Cd></Sts><BookgDt><Dt>2024-03-02</Dt></BookgDt></Ntry></Stmt>` +
		`<Stmt><Acct><Id><IBAN>DE2</IBAN></Id><Ccy>USD</Ccy></Acct>` +
		`<Ntry><Amt Ccy="USD">7.5</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><DtTm>2024-03-03T10:00:00</DtTm></BookgDt><AddtlNtryInf>INTEREST</AddtlNtryInf></Ntry></Stmt>` +
		`</BkToCstmrStmt></Document>`
	check(t, "c.xml", camt, Options{}, want{2, map[string]int64{"EUR": -1000, "USD": 750}, "2024-03-01", "2024-03-03"})
}
