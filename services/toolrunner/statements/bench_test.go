package statements

import (
	"fmt"
	"strings"
	"testing"
)

// Transactions per second for each format, on files made to size (and
// the shared samples for camt, MT940 and QIF, repeated), and the time for
// a 50-page PDF statement.

func benchParse(b *testing.B, name string, data []byte, opts Options) {
	b.Helper()
	r, err := Parse(name, data, opts)
	if err != nil {
		b.Fatal(err)
	}
	n := len(r.Transactions)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		if _, err := Parse(name, data, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "txns/s")
}

func genOFX(n int) []byte {
	var s strings.Builder
	s.WriteString("OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><CURDEF>USD<BANKACCTFROM><BANKID>1<ACCTID>2<ACCTTYPE>CHECKING</BANKACCTFROM><BANKTRANLIST><DTSTART>20240101<DTEND>20241231\n")
	for i := range n {
		fmt.Fprintf(&s, "<STMTTRN><TRNTYPE>DEBIT<DTPOSTED>2024%02d%02d<TRNAMT>-%d.%02d<FITID>%d<NAME>SHOP %d</STMTTRN>\n", 1+i%12, 1+i%28, i%500, i%100, i, i%97)
	}
	s.WriteString("</BANKTRANLIST><LEDGERBAL><BALAMT>0<DTASOF>20241231</LEDGERBAL></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n")
	return []byte(s.String())
}

func genMT940(n int) []byte {
	var s strings.Builder
	s.WriteString(":20:STMT\n:25:NL10BANK0123456789\n:28C:1\n:60F:C240101EUR1000,00\n")
	for i := range n {
		fmt.Fprintf(&s, ":61:24%02d%02d%02d%02dD%d,%02dNMSCNONREF\n:86:/NAME/SHOP %d/REMI/CARD PAYMENT\n", 1+i%12, 1+i%28, 1+i%12, 1+i%28, i%500, i%100, i%97)
	}
	s.WriteString(":62F:C241231EUR0,00\n-\n")
	return []byte(s.String())
}

func genQIF(n int) []byte {
	var s strings.Builder
	s.WriteString("!Type:Bank\n")
	for i := range n {
		fmt.Fprintf(&s, "D%02d/%02d/2024\nT-%d.%02d\nPSHOP %d\n^\n", 1+i%28, 1+i%12, i%500, i%100, i%97)
	}
	return []byte(s.String())
}

func genCamt(n int) []byte {
	var s strings.Builder
	s.WriteString(`<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.02"><BkToCstmrStmt><Stmt><Acct><Id><IBAN>DE1</IBAN></Id><Ccy>EUR</Ccy></Acct>`)
	for i := range n {
		fmt.Fprintf(&s, `<Ntry><Amt Ccy="EUR">%d.%02d</Amt><CdtDbtInd>DBIT</CdtDbtInd><Sts>BOOK</Sts><BookgDt><Dt>2024-%02d-%02d</Dt></BookgDt><AddtlNtryInf>SHOP %d</AddtlNtryInf></Ntry>`, i%500, i%100, 1+i%12, 1+i%28, i%97)
	}
	s.WriteString(`</Stmt></BkToCstmrStmt></Document>`)
	return []byte(s.String())
}

func BenchmarkFormats(b *testing.B) {
	const n = 5000
	pdf, _, _ := genPDF(50, 40)
	for _, c := range []struct {
		name string
		data []byte
		opts Options
	}{
		{"csv", statement10k(), Options{DefaultCurrency: "GBP"}},
		{"ofx", genOFX(n), Options{}},
		{"camt053", genCamt(n), Options{}},
		{"mt940", genMT940(n), Options{}},
		{"qif", genQIF(n), Options{DefaultCurrency: "GBP", DateOrder: "dmy"}},
		{"pdf", pdf, Options{DefaultCurrency: "GBP"}},
	} {
		b.Run(c.name, func(b *testing.B) { benchParse(b, c.name, c.data, c.opts) })
	}
}

// BenchmarkPDF50Pages is the time to read a 50-page statement of 40
// transactions a page.
func BenchmarkPDF50Pages(b *testing.B) {
	data, count, sum := genPDF(50, 40)
	for range b.N {
		r, err := Parse("50pages.pdf", data, Options{DefaultCurrency: "GBP"})
		if err != nil {
			b.Fatal(err)
		}
		var got int64
		for _, tx := range r.Transactions {
			got += tx.AmountMinor
		}
		if len(r.Transactions) != count || got != sum {
			b.Fatalf("%d transactions summing %d, want %d summing %d", len(r.Transactions), got, count, sum)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/50-page-pdf")
}
