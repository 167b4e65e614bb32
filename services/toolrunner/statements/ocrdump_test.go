package statements

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestOCRDump prints the lines OCR reads from the file in OCRDUMP (a
// scanned PDF or an image), marking the ones read as a table header.
func TestOCRDump(t *testing.T) {
	path := os.Getenv("OCRDUMP")
	if path == "" {
		t.Skip("OCRDUMP names no file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []pdfLine
	if strings.HasSuffix(path, ".pdf") {
		_, pages, err := pdfLines(data)
		if err != nil {
			t.Fatal(err)
		}
		for p := 1; p <= pages; p++ {
			img, err := renderPage(data, p)
			if err != nil {
				t.Fatal(err)
			}
			l, err := ocrPage(img, p, ocrDPI)
			if err != nil {
				t.Fatal(err)
			}
			lines = append(lines, l...)
		}
	} else if lines, err = ocrPage(data, 1, 0); err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		fmt.Printf("p%d y=%.0f s=%.0f", l.page, l.y, l.size)
		for _, c := range l.cells {
			fmt.Printf(" [%.0f-%.0f %q]", c.x0, c.x1, c.s)
		}
		_, hdr := headerColumns(l, true)
		fmt.Println(map[bool]string{true: " HEADER"}[hdr])
	}
	r, err := ocrTable(lines, Options{DefaultCurrency: "XTS", DateOrder: "dmy"})
	fmt.Printf("layout %q err %v uncertain %q\n", r.Layout, err, r.Uncertain)
	var sum int64
	for _, tx := range r.Transactions {
		sum += tx.AmountMinor
		fmt.Printf("%s %8d %s %q\n", tx.Date, tx.AmountMinor, tx.Currency, tx.Description)
	}
	fmt.Println(len(r.Transactions), "transactions, sum", sum)
}
