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
