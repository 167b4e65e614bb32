package statements

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestGolden keeps each sample's whole result (descriptions, categories,
// layout) in testdata/golden, so that a change shows in review.
func TestGolden(t *testing.T) {
	dir := filepath.Join("testdata", "samples")
	man := readManifest(t, filepath.Join(dir, "MANIFEST.md"))
	for _, name := range corpusFiles(t, dir) {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			def := "XTS"
			if e := man[name]; !fileNamesCurrency(e) {
				def = onlyCurrency(e)
			}
			r, err := Parse(name, data, Options{DefaultCurrency: def, DateOrder: "dmy"})
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(name, filepath.Ext(name))+".json")
			got, _ := json.MarshalIndent(r, "", "  ")
			if *update {
				_ = os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if diff := cmp.Diff(strings.TrimSpace(string(want)), strings.TrimSpace(string(got))); diff != "" {
				t.Errorf("golden %s (-want +got):\n%s", golden, diff)
			}
		})
	}
}

func TestAmounts(t *testing.T) {
	for give, want := range map[string]int64{
		"12.50": 1250, "-12.5": -1250, "1,234.56": 123456, "1.234,56": 123456, "136,13": 13613, "+120,00": 12000,
		"-$76.00": -7600, "$1,750.06": 175006, "(12.00)": -1200, "12.00-": -1200, "-3.77000": -377, "-30.000": -3000,
		"0.005": 0, "0.015": 2, "-0.005": 0, "-0.0051": -1, "0.004": 0, "1,968.51CR": 196851, "12.00 DR": -1200, "DKK -12,50": -1250, "1'234.50": 123450, "-3.7700000000000000": -377, "£3": 300, "€ 1 234,50": 123450, "1,750": 175000,
	} {
		got, _, err := parseAmount(give)
		if err != nil || got != want {
			t.Errorf("parseAmount(%q) = %d, %v; want %d", give, got, err, want)
		}
	}
	for _, bad := range []string{"", "abc", "12.34.x", "1e5", "--", "12,3,4.5.6", "NaN"} {
		if v, _, err := parseAmount(bad); err == nil {
			t.Errorf("parseAmount(%q) = %d, want an error", bad, v)
		}
	}
}

func TestDateOrder(t *testing.T) {
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
		cells     []dateCell
		def       dateOrder
		want      dateOrder
		ambiguous bool
	}{
		{cells("24/12/2009", "01/12/2009"), 0, dmy, false},
		{cells("11/01/2014", "11/17/2014"), 0, mdy, false},
		{cells("22.01.2014"), 0, dmy, false},
		{cells("01/02/2014"), mdy, mdy, true},
		{cells("01/02/2014"), dmy, dmy, true},
		{cells("12/04/2009"), mdy, mdy, true},
		{cells("2014/01/22", "20091224"), 0, ymd, false},
		{cells("13/01/2014", "01/13/2014"), 0, 0, true},
	}
	for i, tt := range tests {
		got, amb := orderOf(tt.cells, tt.def)
		if got != tt.want || amb != tt.ambiguous {
			t.Errorf("case %d: order %v ambiguous %v, want %v %v", i, got, amb, tt.want, tt.ambiguous)
		}
	}
	if _, ok := splitDate("2026-02-30"); ok {
		t.Error("30 February accepted")
	}
	c, _ := splitDate("29/02/2024")
	if d, ok := c.format(dmy); !ok || d != "2024-02-29" {
		t.Errorf("leap day = %q", d)
	}
}

func TestHeaderedCSVAndReview(t *testing.T) {
	csv := "Date,Description,Amount,Balance\n" +
		"2026-10-01,TESCO STORES 1234,-12.99,987.01\n" +
		"2026-10-02,COSTA COFFEE,-4.50,982.51\n" +
		"2026-10-03,SALARY ACME LTD,2500.00,3482.51\n" +
		"2026-10-04,PRET A MANGER,-6.10,3476.41\n" +
		"2026-10-05,CAR DEALER DEPOSIT,-25000.00,-21523.59\n"
	r, err := Parse("october.csv", []byte(csv), Options{DefaultCurrency: "GBP"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Txn{}
	for _, tx := range r.Transactions {
		got[tx.Vendor] = tx
	}
	if tx := got["Tesco Stores"]; tx.Category != "groceries" || tx.AmountMinor != -1299 || tx.NeedsReview {
		t.Errorf("tesco = %+v", tx)
	}
	if tx := got["Salary Acme Ltd"]; tx.Category != "income" {
		t.Errorf("salary = %+v", tx)
	}
	if tx := got["Car Dealer Deposit"]; !tx.NeedsReview || !strings.Contains(tx.ReviewReason, "larger") {
		t.Errorf("an unusual amount was not flagged: %+v", tx)
	}
}

func TestNotStatements(t *testing.T) {
	for name, data := range map[string]string{
		"empty.csv":    "",
		"words.csv":    "hello world\nthis is not, a statement\n",
		"numbers.csv":  "1,2,3\n4,5,6\n",
		"broken.ofx":   "OFXHEADER:100\n<OFX><BANKTRANLIST><STMTTRN><TRNAMT>oops</STMTTRN></OFX>",
		"mixed.csv":    "13/01/2014,1.00,a\n01/13/2014,2.00,b\n",
		"receipt.txt":  "Thank you for your order!\nTotal: £12.00\n",
		"binary.csv":   "\x00\x01\x02\x03\xff\xfe",
		"no-dates.csv": "a,1.00\nb,2.00\n",
	} {
		if r, err := Parse(name, []byte(data), Options{}); err == nil {
			t.Errorf("%s parsed into %+v", name, r)
		} else if !strings.Contains(err.Error(), "not a statement we can read") {
			t.Errorf("%s: error %q does not say what went wrong", name, err)
		}
	}
}

func FuzzParseCSV(f *testing.F) {
	addSeeds(f, ".csv")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse("fuzz.csv", data, Options{})
		if err == nil && len(r.Transactions) == 0 {
			t.Fatal("success without transactions")
		}
	})
}

func FuzzParseOFX(f *testing.F) {
	addSeeds(f, ".ofx", ".qfx")
	f.Fuzz(func(t *testing.T, data []byte) {
		if !looksLikeOFX(decodeText(data)) {
			data = append([]byte("OFXHEADER:100\n"), data...)
		}
		r, err := Parse("fuzz.ofx", data, Options{})
		if err == nil && len(r.Transactions) == 0 {
			t.Fatal("success without transactions")
		}
	})
}

// addSeeds adds the samples with the given extensions to a fuzz corpus.
func addSeeds(f *testing.F, exts ...string) {
	dir := filepath.Join("testdata", "samples")
	for _, name := range corpusFiles(f, dir) {
		for _, ext := range exts {
			if strings.HasSuffix(name, ext) {
				b, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					f.Fatal(err)
				}
				f.Add(b)
			}
		}
	}
}
