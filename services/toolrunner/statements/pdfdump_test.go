package statements

import (
	"fmt"
	"os"
	"testing"
)

func TestPDFDump(t *testing.T) {
	path := os.Getenv("PDFDUMP")
	if path == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(path)
	lines, _, err := pdfLines(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		fmt.Printf("p%d y=%.1f", l.page, l.y)
		for _, c := range l.cells {
			fmt.Printf(" [%.0f-%.0f %q]", c.x0, c.x1, c.s)
		}
		_, hdr := headerColumns(l, false)
		fmt.Println(map[bool]string{true: " HEADER"}[hdr])
	}
}
