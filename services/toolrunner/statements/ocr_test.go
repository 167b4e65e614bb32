package statements

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The OCR tests read scans made from the text PDFs (scangen_test.go):
// the same statements, with no text layer, must import to the same
// figures, and one whose figures do not add up must say so.

// needOCR fails the test when the programs OCR needs are missing: a
// machine that runs the tests must have them (make test installs them
// through scripts/test-env.sh). Under -short the OCR tests, which take
// seconds a page, are skipped.
func needOCR(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("OCR takes seconds a page: run without -short")
	}
	for _, p := range []string{"tesseract", "pdftoppm"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is not installed, and the OCR tests need it: apt-get install tesseract-ocr tesseract-ocr-eng poppler-utils (scripts/test-env.sh does it for make test)", p)
		}
	}
}

// Every scan, at 300 and 200 dpi, must import to its manifest's figures,
// checked against the balances it prints. A scan read wrong fails the
// test, and says whether the importer had at least flagged it (it must
// never be wrong and silent).
func TestScannedCorpus(t *testing.T) {
	t.Parallel()
	needOCR(t)
	dir, _ := samplesDir(t)
	man := readManifest(t, filepath.Join(dir, "MANIFEST.md"))
	n := 0
	for _, name := range corpusFiles(t, dir) {
		if !strings.HasSuffix(name, ".pdf") {
			continue
		}
		n++
		e := man[name]
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, dpi := range []int{300, 200} {
			key := name + "/" + strconv.Itoa(dpi) + "dpi"
			seed := uint64(n*1000 + dpi)
			t.Run(key, func(t *testing.T) {
				t.Parallel()
				scan := scanOf(t, data, dpi, seed)
				if lines, _, _ := pdfLines(scan); len(lines) != 0 {
					t.Fatalf("the scan has a text layer: %d lines", len(lines))
				}
				r, err := Parse(name, scan, Options{DefaultCurrency: "XTS", DateOrder: "dmy"})
				if err != nil {
					t.Fatal(err)
				}
				if r.Format != "ocr" {
					t.Fatalf("read as %q, not by OCR", r.Format)
				}
				problems := corpusDiff(e, r)
				var mismatch, unverified []string // what the balances said
				for _, u := range r.Uncertain {
					switch {
					case strings.Contains(u, "prints no balances"):
						unverified = append(unverified, u)
					case strings.Contains(u, "balance") || strings.Contains(u, "total"):
						mismatch = append(mismatch, u)
					}
				}
				flagged := 0
				for _, tx := range r.Transactions {
					if tx.NeedsReview && (strings.Contains(tx.ReviewReason, "balance") || strings.Contains(tx.ReviewReason, "total")) {
						flagged++
					}
				}
				switch {
				case len(problems) == 0 && len(mismatch) > 0:
					t.Errorf("read exactly, yet said not to add up: %q", mismatch)
				case len(problems) > 0 && (len(mismatch)+len(unverified) == 0 || flagged == 0):
					// Never a wrong import that says nothing.
					t.Errorf("read wrong and not flagged: %q", problems)
				case len(problems) > 0:
					t.Errorf("read wrong, flagged (%d rows for review): %q; %q", flagged, append(mismatch, unverified...), problems)
				case len(unverified) > 0:
					t.Logf("read exactly, but its balances were not read to check it: %q", unverified)
				}
			})
		}
	}
	if n < 2 {
		t.Fatalf("only %d PDF samples in %s", n, dir)
	}
}

// A statement sent as a picture of its page, PNG or JPEG.
func TestScannedImage(t *testing.T) {
	t.Parallel()
	needOCR(t)
	pdf, count, sum := genPDF(1, 30)
	for _, c := range []struct {
		format string
		dpi    int
	}{{"png", 300}, {"jpeg", 200}} {
		t.Run(c.format, func(t *testing.T) {
			t.Parallel()
			img := photoOf(t, pdf, c.dpi, c.format, 7)
			r, err := Parse("statement."+c.format, img, Options{DefaultCurrency: "GBP"})
			if err != nil {
				t.Fatal(err)
			}
			var got int64
			for _, tx := range r.Transactions {
				got += tx.AmountMinor
				if tx.NeedsReview || tx.Currency != "GBP" || !strings.HasPrefix(tx.Date, "2024-03-") {
					t.Errorf("%+v", tx)
				}
			}
			if r.Format != "ocr" || len(r.Transactions) != count || got != sum {
				t.Fatalf("%d transactions summing %d, want %d summing %d (format %q, layout %q, uncertain %q)",
					len(r.Transactions), got, count, sum, r.Format, r.Layout, r.Uncertain)
			}
		})
	}
}

// A statement whose printed amount does not agree with its printed
// balances is imported with those transactions marked for review, and
// says why, by OCR as from its text.
func TestScanThatDoesNotAddUp(t *testing.T) {
	t.Parallel()
	needOCR(t)
	pdf, count, _ := genPDF(1, 20)
	// The fourth paid-out amount (x 300-399) gets another first digit:
	// the same length, so the PDF's offsets stay right.
	re := regexp.MustCompile(`1 0 0 1 3\d\d\.\d \d+\.\d Tm \((\d)\d*\.\d\d\) Tj`)
	m := re.FindAllSubmatchIndex(pdf, -1)
	if len(m) < 4 {
		t.Fatalf("%d paid-out amounts in the generated PDF", len(m))
	}
	bad := bytes.Clone(pdf)
	d := m[3][2]
	bad[d] = map[byte]byte{'8': '3'}[bad[d]]
	if bad[d] == 0 {
		bad[d] = '8'
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"text", bad}, {"scan", scanOf(t, bad, 300, 3)}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, err := Parse("bad.pdf", c.data, Options{DefaultCurrency: "GBP"})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Transactions) != count {
				t.Fatalf("%d transactions, want %d", len(r.Transactions), count)
			}
			review := 0
			for _, tx := range r.Transactions {
				if tx.NeedsReview {
					review++
				}
			}
			if review == 0 || review > 2 || !strings.Contains(strings.Join(r.Uncertain, "|"), "do not add up") {
				t.Fatalf("%d marked for review, uncertain %q", review, r.Uncertain)
			}
		})
	}
	// And the statement as printed adds up: nothing marked.
	r, err := Parse("good.pdf", pdf, Options{DefaultCurrency: "GBP"})
	if err != nil || len(r.Uncertain) > 1 { // the currency is the default's
		t.Fatalf("%v %q", err, r.Uncertain)
	}
}

// OCR runs in the sandbox's confined worker as in process.
func TestSandboxReadsScans(t *testing.T) {
	t.Parallel()
	needOCR(t)
	pdf, count, sum := genPDF(1, 12)
	scan := scanOf(t, pdf, 300, 11)
	s := sandbox("")
	s.CPU, s.Memory, s.Wall, s.MaxInput = 30*time.Second, 1<<30, 2*time.Minute, 10<<20
	r, err := s.Parse(context.Background(), "scan.pdf", scan)
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	for _, tx := range r.Transactions {
		got += tx.AmountMinor
	}
	if r.Format != "ocr" || len(r.Transactions) != count || got != sum {
		t.Fatalf("%d transactions summing %d, want %d summing %d (%q)", len(r.Transactions), got, count, sum, r.Layout)
	}
}

// BenchmarkOCRPage is the time to import one scanned page of 40
// transactions: rendering, cleaning, tesseract and the table. cpu-ms/page
// is the processor time of this process and its children (pdftoppm,
// tesseract), which a busy machine does not inflate as it does ms/page.
func BenchmarkOCRPage(b *testing.B) {
	needOCR(b)
	pdf, count, _ := genPDF(1, 40)
	scan := scanOf(b, pdf, 300, 5)
	cpu := func() time.Duration {
		var self, kids syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
		var d time.Duration
		for _, t := range []syscall.Timeval{self.Utime, self.Stime, kids.Utime, kids.Stime} {
			d += time.Duration(t.Nano())
		}
		return d
	}
	b.ResetTimer()
	start := cpu()
	for range b.N {
		r, err := Parse("scan.pdf", scan, Options{DefaultCurrency: "GBP"})
		if err != nil || len(r.Transactions) != count {
			b.Fatalf("%v: %d transactions", err, len(r.Transactions))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/page")
	b.ReportMetric(float64((cpu()-start).Milliseconds())/float64(b.N), "cpu-ms/page")
}

// Without tesseract a scan fails with what to install, not a guess.
func TestOCRMissingSaysWhatToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	png := []byte("\x89PNG\r\n\x1a\n")
	scan := imagePDF(t, []*grayPage{{w: 8, h: 8, pix: make([]uint8, 64)}}, 72)
	for name, data := range map[string][]byte{"statement.png": png, "scan.pdf": scan} {
		_, err := Parse(name, data, Options{})
		if err == nil || !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "apt-get install tesseract-ocr") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
