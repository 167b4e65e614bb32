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
		{"uk_ambiguous_dates_dayfirst.csv", Options{DefaultCurrency: "GBP", DateOrder: "en-US"}, []string{"day/month", "5 days"}},
		{"uk_ambiguous_dates_dayfirst.csv", Options{DefaultCurrency: "GBP", DateOrder: "dmy"}, []string{"day/month"}},
		{"uk_ambiguous_dates_dayfirst.csv", Options{DefaultCurrency: "GBP"}, []string{"day/month"}},
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
