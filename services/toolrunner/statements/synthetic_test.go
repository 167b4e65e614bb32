package statements

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSynthetic reads the made-up files of testdata/synthetic, each in the
// shape of a real export that was once misread, against their manifest
// (count, signed sum per currency, date range) and checks that what was
// decided without the file saying so is told in Uncertain.
func TestSynthetic(t *testing.T) {
	dir := filepath.Join("testdata", "synthetic")
	man := readManifest(t, filepath.Join(dir, "MANIFEST.md"))
	tests := []struct {
		file      string
		opts      Options
		uncertain []string // each must be in one Uncertain line
	}{
		{"french_preamble_debit_credit.csv", Options{DefaultCurrency: "EUR", DateOrder: "dmy"}, nil},
		{"french_preamble_debit_credit.csv", Options{DefaultCurrency: "EUR", DateOrder: "mdy"}, nil},
		{"french_preamble_noheader.csv", Options{DefaultCurrency: "EUR", DateOrder: "dmy"}, nil},
		// The user's locale writes the month first; the file's series says otherwise.
		{"uk_ambiguous_dates_dayfirst.csv", Options{DefaultCurrency: "GBP", DateOrder: "en-US"}, []string{"day/month", "5 days", "not your default month/day"}},
		{"uk_ambiguous_dates_dayfirst.csv", Options{DefaultCurrency: "GBP", DateOrder: "dmy"}, []string{"day/month"}},
		{"uk_ambiguous_dates_dayfirst.csv", Options{DefaultCurrency: "GBP"}, []string{"day/month"}},
		// The user's currency is GBP; the file is Danish.
		{"danish_semicolon_no_currency.csv", Options{DefaultCurrency: "GBP", DateOrder: "dmy"}, []string{"DKK", "Danish"}},
		{"danish_semicolon_no_currency.csv", Options{}, []string{"DKK", "Danish"}},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.opts.DefaultCurrency+"-"+tt.opts.DateOrder, func(t *testing.T) {
			e, ok := man[tt.file]
			if !ok {
				t.Fatalf("%s has no row in MANIFEST.md", tt.file)
			}
			data, err := os.ReadFile(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			r, err := Parse(tt.file, data, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainst(t, e, r)
			for _, w := range tt.uncertain {
				found := false
				for _, u := range r.Uncertain {
					found = found || strings.Contains(u, w)
				}
				if !found {
					t.Errorf("no uncertainty mentions %q: %q", w, r.Uncertain)
				}
			}
		})
	}
}

func TestSeriesOrder(t *testing.T) {
	cells := func(ss ...string) []dateCell {
		var out []dateCell
		for _, s := range ss {
			c, ok := splitDate(s)
			if !ok {
				t.Fatalf("splitDate(%q) failed", s)
			}
			out = append(out, c)
		}
		return out
	}
	tests := []struct {
		name  string
		cells []dateCell
		want  dateOrder
	}{
		{"five days day-first", cells("01/11/2026", "02/11/2026", "03/11/2026", "05/11/2026"), dmy},
		{"five days month-first", cells("11/01/2026", "11/02/2026", "11/03/2026", "11/05/2026"), mdy},
		{"newest first, day-first", cells("05/11/2026", "04/11/2026", "01/11/2026"), dmy},
		{"over new year, day-first", cells("10/12/2025", "11/12/2025", "02/01/2026"), dmy},
		{"one date", cells("01/02/2026", "01/02/2026"), 0},
		{"the same either way", cells("01/01/2026", "02/02/2026"), 0},
		{"day equals month", cells("05/05/2026", "06/06/2026"), 0},
	}
	for _, tt := range tests {
		if got, why := seriesOrder(tt.cells); got != tt.want || (got != 0) != (why != "") {
			t.Errorf("%s: %v (%q), want %v", tt.name, got, why, tt.want)
		}
	}
}

// A file the series cannot decide keeps the user's order.
func TestAmbiguousTieKeepsDefault(t *testing.T) {
	csv := "Date,Description,Amount\n01/02/2026,COFFEE,-3.00\n01/02/2026,LUNCH,-9.50\n"
	for order, want := range map[string]string{"mdy": "2026-01-02", "dmy": "2026-02-01"} {
		r, err := Parse("tie.csv", []byte(csv), Options{DefaultCurrency: "GBP", DateOrder: order})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Transactions[0].Date; got != want {
			t.Errorf("with %s: %s, want %s", order, got, want)
		}
		if !strings.Contains(strings.Join(r.Uncertain, "; "), "your default") {
			t.Errorf("with %s: uncertain %q does not say the default was used", order, r.Uncertain)
		}
	}
}

func TestInferCurrency(t *testing.T) {
	split := func(s string) []string { return strings.Split(s, ";") }
	tests := []struct {
		name, header, preamble string // preamble lines joined by "|"
		want, from             string
	}{
		{"danish headers", "Dato;Tekst;Beløb;Saldo", "", "DKK", "Danish"},
		{"danish booking date", "Bogført;Tekst;Beløb i alt;Saldo", "", "DKK", "Danish"},
		{"norwegian", "Dato;Forklaring;Rentedato;Ut fra konto;Inn på konto", "", "NOK", "Norwegian"},
		{"danish with a value date", "Bogføringsdato;Rentedato;Tekst;Beløb;Saldo", "", "DKK", "Danish"},
		{"swedish", "Bokföringsdag;Text;Belopp;Saldo", "", "SEK", "Swedish"},
		{"polish", "Data operacji;Opis operacji;Kwota;Saldo po operacji", "", "PLN", "Polish"},
		{"czech", "Datum;Popis;Částka;Zůstatek", "", "CZK", "Czech"},
		{"german says nothing", "Buchungstag;Verwendungszweck;Betrag", "", "", ""},
		{"french says nothing", "Date opération;Libellé;Montant", "", "", ""},
		{"swiss iban under german headers", "Buchungstag;Text;Betrag", "Konto;IBAN CH93 0076 2011 6238 5295 7", "CHF", "IBAN (CH"},
		{"french iban", "Date;Libellé;Montant", "Compte;FR14 2004 1010 0505 0001 3M02 606", "EUR", "IBAN (FR"},
		{"finnish iban over swedish headers", "Bokföringsdag;Text;Belopp", "Konto: FI2112345600000785", "EUR", "IBAN (FI"},
		{"iban with a wrong check digit", "Buchungstag;Text;Betrag", "IBAN;CH94 0076 2011 6238 5295 7", "", ""},
		{"two countries' ibans fall back to the headers", "Dato;Tekst;Beløb", "Fra DK5000400440116243|Til SE4550000000058398257466", "DKK", "Danish"},
		{"bank name", "Date;Description;Amount", "Jyske Bank A/S|Kontoudtog", "DKK", "bank"},
		{"english says nothing", "Date;Description;Amount;Balance", "Account 12345678", "", ""},
	}
	for _, tt := range tests {
		var pre [][]string
		if tt.preamble != "" {
			for _, l := range strings.Split(tt.preamble, "|") {
				pre = append(pre, split(l))
			}
		}
		got, from := inferCurrency(split(tt.header), pre)
		if got != tt.want || !strings.Contains(from, tt.from) {
			t.Errorf("%s: %q from %q, want %q from %q", tt.name, got, from, tt.want, tt.from)
		}
	}
}

// A currency the file names beats what its language suggests, and what
// the file points to beats the user's default.
func TestInferredCurrencyOrder(t *testing.T) {
	tests := []struct {
		name, csv, def, want, from string
	}{
		{"named in the header", "Dato;Tekst;Beløb (EUR)\n03.11.2026;Netto;-12,50\n04.11.2026;Løn;100,00\n", "GBP", "EUR", "file"},
		{"named in a column", "Dato;Tekst;Beløb;Valuta\n03.11.2026;Netto;-12,50;SEK\n04.11.2026;Løn;100,00;SEK\n", "GBP", "SEK", "file"},
		{"danish headers", "Dato;Tekst;Beløb\n03.11.2026;Netto;-12,50\n04.11.2026;Løn;100,00\n", "GBP", "DKK", "inferred"},
		{"iban in the preamble", "Konto;DK50 0040 0440 1162 43\nDate;Text;Amount\n03.11.2026;Netto;-12.50\n04.11.2026;Salary;100.00\n", "GBP", "DKK", "inferred"},
		{"nothing: the default", "Date;Text;Amount\n03.11.2026;Netto;-12.50\n04.11.2026;Salary;100.00\n", "GBP", "GBP", "default"},
	}
	for _, tt := range tests {
		r, err := Parse("x.csv", []byte(tt.csv), Options{DefaultCurrency: tt.def, DateOrder: "dmy"})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := r.Currencies(); len(got) != 1 || got[0] != tt.want || r.CurrencyFrom != tt.from {
			t.Errorf("%s: %v from %q, want %s from %q (uncertain %q)", tt.name, got, r.CurrencyFrom, tt.want, tt.from, r.Uncertain)
		}
	}
}

// The header is the row naming the table nearest above its rows, not a
// summary line above it that names a date and an amount too.
func TestHeaderNearestTheTable(t *testing.T) {
	csv := "Relevé;Date d'arrêté;Montant total\n" +
		"Compte;12345678\n" +
		"Libellé;Date;Débit;Crédit\n" +
		"CB CARREFOUR;02/10/2026;45,20;\n" +
		"VIR SALAIRE;05/10/2026;;2 450,00\n" +
		"CB SNCF;21/10/2026;89,00;\n"
	r, err := Parse("releve.csv", []byte(csv), Options{DefaultCurrency: "EUR", DateOrder: "dmy"})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, tx := range r.Transactions {
		sum += tx.AmountMinor
	}
	if len(r.Transactions) != 3 || sum != 231580 || r.Transactions[0].Description != "CB CARREFOUR" {
		t.Errorf("%d transactions summing %d (layout %q), want 3 summing 231580", len(r.Transactions), sum, r.Layout)
	}
}

// Opening and closing balance lines written like rows of their own, with
// the date and the amount in other cells than the table's, are not
// transactions and do not hide the table's date column.
func TestBalanceLinesAroundATable(t *testing.T) {
	csv := "Solde initial;01/10/2026;1 234,56\n" +
		"Solde final;31/10/2026;1 099,72\n" +
		"03/10/2026;CB MONOPRIX;-23,45\n" +
		"15/10/2026;PRLV ORANGE;-39,99\n" +
		"16/10/2026;CB FNAC;-71,40\n" +
		"Solde au;31/10/2026;1 099,72\n"
	r, err := Parse("releve.csv", []byte(csv), Options{DefaultCurrency: "EUR", DateOrder: "dmy"})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, tx := range r.Transactions {
		sum += tx.AmountMinor
	}
	if len(r.Transactions) != 3 || sum != -13484 {
		t.Errorf("%d transactions summing %d (layout %q, warnings %q), want 3 summing -13484", len(r.Transactions), sum, r.Layout, r.Warnings)
	}
}
