package statements

import (
	"bufio"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The corpus test reads every file of the shared statement samples and
// checks it against the figures of the samples' MANIFEST.md: transaction
// count, signed sum per currency, currency, and date range. It walks the
// shared folder itself when it is there (../shared beside the repository)
// and otherwise the copy in testdata/samples, which CI on a clean clone has.

// expectation is one manifest row.
type expectation struct {
	file    string
	count   int
	sums    map[string]*big.Rat // by currency; "" when the file names none
	noCcy   string              // the account's currency when the file names none
	from    string
	to      string
	flipped bool // the manifest's sum is from the card issuer's side
	raw     string
}

var (
	reSum      = regexp.MustCompile(`(?:^|[\s(;])(?:([A-Z]{3})\s*)?([+\-−]?[0-9][0-9,]*\.[0-9]+)(?:\s+([A-Z]{3}))?`)
	reDates    = regexp.MustCompile(`(\d{4}-\d{2}-\d{2})(?:\.\.(\d{4}-\d{2}-\d{2}))?`)
	reAccount  = regexp.MustCompile(`the account is ([A-Z]{3})`)
	reLeadingN = regexp.MustCompile(`^\s*(\d+)`)
)

// readManifest parses the rows of MANIFEST.md's tables.
func readManifest(t testing.TB, path string) map[string]expectation {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]expectation{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) < 8 {
			continue
		}
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		name := cells[0]
		if name == "file" || strings.HasPrefix(name, "---") {
			continue
		}
		n := reLeadingN.FindStringSubmatch(cells[4])
		if n == nil {
			t.Fatalf("manifest row %q: no count", name)
		}
		e := expectation{file: name, sums: map[string]*big.Rat{}, raw: line}
		fmt.Sscan(n[1], &e.count)
		sumCell := cells[5]
		if i := strings.Index(sumCell, "("); i >= 0 && !strings.Contains(sumCell[:i], ";") {
			// "+129.40 GBP (209.06 → 338.46)": balances in brackets
			if m := reAccount.FindStringSubmatch(sumCell[i:]); m != nil {
				e.noCcy = m[1]
			}
			sumCell = sumCell[:i]
		}
		for _, m := range reSum.FindAllStringSubmatch(sumCell, -1) {
			ccy := m[1] + m[3]
			num := strings.ReplaceAll(strings.ReplaceAll(m[2], ",", ""), "−", "-")
			r, ok := new(big.Rat).SetString(num)
			if !ok {
				t.Fatalf("manifest row %q: sum %q", name, m[2])
			}
			e.sums[ccy] = r
		}
		if len(e.sums) == 0 {
			t.Fatalf("manifest row %q: no sum in %q", name, cells[5])
		}
		d := reDates.FindStringSubmatch(cells[6])
		if d == nil {
			t.Fatalf("manifest row %q: no dates in %q", name, cells[6])
		}
		e.from, e.to = d[1], d[2]
		if e.to == "" {
			e.to = e.from
		}
		e.flipped = strings.Contains(cells[5], "card convention") || strings.Contains(cells[7], "the sign is reversed")
		out[name] = e
	}
	return out
}

// samplesDir is the shared samples folder when it is reachable, else the
// copy in testdata.
func samplesDir(t testing.TB) (string, bool) {
	for _, d := range []string{os.Getenv("PURSER_SHARED_SAMPLES"), "../../../../shared/samples/statements", "/work/shared/samples/statements"} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "MANIFEST.md")); err == nil {
			return d, true
		}
	}
	return filepath.Join("testdata", "samples"), false
}

func corpusFiles(t testing.TB, dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() || e.Name() == "MANIFEST.md" || e.Name() == "NOTICE.md" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		files = append(files, e.Name())
	}
	slices.Sort(files)
	return files
}

func TestCorpus(t *testing.T) {
	dir, shared := samplesDir(t)
	t.Logf("samples from %s", dir)
	man := readManifest(t, filepath.Join(dir, "MANIFEST.md"))
	files := corpusFiles(t, dir)
	if len(files) < 21 {
		t.Fatalf("only %d samples in %s", len(files), dir)
	}
	if shared {
		// The copy in testdata must be kept up to date with the shared folder.
		for _, f := range files {
			a, _ := os.ReadFile(filepath.Join(dir, f))
			b, err := os.ReadFile(filepath.Join("testdata", "samples", f))
			if err != nil || string(a) != string(b) {
				t.Errorf("testdata/samples/%s differs from the shared sample: copy it", f)
			}
		}
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			e, ok := man[name]
			if !ok {
				t.Fatalf("%s has no row in MANIFEST.md", name)
			}
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			// The account's currency is the default only where the file
			// names none; elsewhere the default is a currency no file uses,
			// so a currency read from the file is told apart from it.
			def := "XTS"
			if !fileNamesCurrency(e) {
				def = onlyCurrency(e)
			}
			r, err := Parse(name, data, Options{DefaultCurrency: def, DateOrder: "dmy"})
			if err != nil {
				t.Fatal(err)
			}
			checkAgainst(t, e, r)
		})
	}
}

// fileNamesCurrency: the manifest's figures come with a currency the file
// itself states. Files that state none are listed here by what their
// manifest row says of them.
func fileNamesCurrency(e expectation) bool {
	if _, ok := e.sums[""]; ok {
		return false
	}
	return !slices.Contains(currencyFromCaller, e.file)
}

// currencyFromCaller are the samples with no currency in them: no
// currency column, code or unambiguous symbol (a "$" is not one).
var currencyFromCaller = []string{
	"chase_checking_noheader.csv", "ing_nl_afbij.csv", "french_bank_semicolon.csv", "suntrust_debit_credit.csv",
	"nz_credit_card_charges_positive.csv", "us_checking_ddmmyyyy_split_signed.csv",
}

func onlyCurrency(e expectation) string {
	if e.noCcy != "" {
		return e.noCcy
	}
	for c := range e.sums {
		if c != "" {
			return c
		}
	}
	return ""
}

func checkAgainst(t *testing.T, e expectation, r Result) {
	t.Helper()
	for _, p := range corpusDiff(e, r) {
		t.Error(p)
	}
}

// corpusDiff is how a result differs from its manifest row, in words.
func corpusDiff(e expectation, r Result) []string {
	var out []string
	sums := map[string]int64{}
	from, to := "9999", ""
	for _, tx := range r.Transactions {
		sums[tx.Currency] += tx.AmountMinor
		from, to = min(from, tx.Date), max(to, tx.Date)
		if len(tx.Date) != 10 || tx.Description == "" || tx.Category == "" {
			out = append(out, fmt.Sprintf("incomplete transaction %+v", tx))
		}
	}
	if len(r.Transactions) != e.count {
		out = append(out, fmt.Sprintf("%d transactions, want %d (layout %q, warnings %q)", len(r.Transactions), e.count, r.Layout, r.Warnings))
	}
	want := map[string]int64{}
	for c, s := range e.sums {
		if c == "" {
			c = e.noCcy
		}
		minor := new(big.Rat).Mul(s, big.NewRat(pow10(minorUnits(c)), 1))
		if !minor.IsInt() {
			return append(out, fmt.Sprintf("manifest sum %s is not whole in %s", s.FloatString(4), c))
		}
		v := minor.Num().Int64()
		if e.flipped {
			v = -v
		}
		want[c] = v
	}
	if fmt.Sprint(sums) != fmt.Sprint(want) {
		out = append(out, fmt.Sprintf("sums %v, want %v (layout %q)", sums, want, r.Layout))
	}
	if from != e.from || to != e.to {
		out = append(out, fmt.Sprintf("dates %s..%s, want %s..%s", from, to, e.from, e.to))
	}
	return out
}

func pow10(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}

func TestManifestReader(t *testing.T) {
	dir, _ := samplesDir(t)
	man := readManifest(t, filepath.Join(dir, "MANIFEST.md"))
	camt := man["handelsbanken_camt_053_swedish_account_statement.xml"]
	if camt.count != 5 || camt.sums["SEK"].FloatString(2) != "11947.20" || camt.sums["NOK"].FloatString(2) != "-155259.00" {
		t.Fatalf("camt row read as %+v", camt)
	}
	if q := man["rustqif_monzo.qif"]; q.noCcy != "GBP" || q.sums[""].FloatString(2) != "558.45" {
		t.Fatalf("qif row read as %+v", q)
	}
	if p := man["anonymised_HSBC_UK_CRD_0000111215197236_20240112.pdf"]; !p.flipped || p.from != "2023-12-13" || p.to != "2024-01-09" {
		t.Fatalf("card row read as %+v", p)
	}
	if n := man["nz_credit_card_charges_positive.csv"]; !n.flipped || n.sums["NZD"].FloatString(2) != "-187.01" {
		t.Fatalf("nz row read as %+v", n)
	}
	if z := man["fruitl00p_Zetb_sample.sta"]; z.sums["NGN"].FloatString(2) != "-3743.91" {
		t.Fatalf("zetb row read as %+v", z)
	}
}
