package statements

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A statement whose text is in a composite font (Type0, Identity-H,
// ToUnicode), as most modern bank PDFs are, reads exactly as the same
// statement in a simple font: every transaction, its date, amount and
// description, so the columns stay apart.
func TestType0Statement(t *testing.T) {
	simple, count, sum := genPDF(3, 30)
	composite, _, _ := genPDFFont(3, 30, genType0)
	want, err := Parse("simple.pdf", simple, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse("type0.pdf", composite, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, tx := range got.Transactions {
		total += tx.AmountMinor
	}
	if len(got.Transactions) != count || total != sum {
		t.Fatalf("%d transactions summing %d, want %d summing %d", len(got.Transactions), total, count, sum)
	}
	// A new day every second row, from 2 March: 45 days over 90 rows.
	if first, last := got.Transactions[0].Date, got.Transactions[count-1].Date; first != "2024-03-02" || last != "2024-04-15" {
		t.Errorf("dates from %s to %s, want 2024-03-02 to 2024-04-15", first, last)
	}
	if d := cmp.Diff(want.Transactions, got.Transactions); d != "" {
		t.Errorf("the Type0 statement reads differently (-simple +type0):\n%s", d)
	}
}

// type0Page is a one-page PDF whose content shows text in font (objects
// from 3, the font named F1).
func type0Page(font []string, content string) []byte {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [%d 0 R] /Count 1 >>"}
	objs = append(objs, font...)
	page := len(objs) + 1
	objs[1] = fmt.Sprintf(objs[1], page)
	objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", page+1))
	objs = append(objs, genStream(content))
	return assemblePDF(objs)
}

func pageLines(t *testing.T, data []byte) []pdfLine {
	t.Helper()
	lines, _, err := pdfLines(data)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// Characters beyond ASCII come through the ToUnicode CMap: accents,
// currency signs, a ligature that is two letters, a character outside
// the BMP; kerning in TJ and the /W widths place the cells.
func TestType0Text(t *testing.T) {
	show := genType0.show
	content := "BT /F1 10 Tf 50 700 Td " + show("Café Straße") + " Tj ET\n" +
		"BT /F1 10 Tf 300 700 Td [" + show("Net") + " -1000 " + show("£2.50") + "] TJ ET\n" +
		"BT /F1 10 Tf 50 680 Td " + show("ﬁnal 😀 €3 ä ö ü") + " Tj ET\n"
	lines := pageLines(t, type0Page(genType0.objs, content))
	if len(lines) != 2 {
		t.Fatalf("%d lines: %+v", len(lines), lines)
	}
	l := lines[0]
	if len(l.cells) != 3 || l.cells[0].s != "Café Straße" || l.cells[1].s != "Net" || l.cells[2].s != "£2.50" {
		t.Fatalf("first line %+v", l.cells)
	}
	// 11 glyphs of 500 units at size 10; the TJ's -1000 is an em.
	if c := l.cells[0]; c.x0 != 50 || c.x1 != 105 {
		t.Errorf("Café Straße spans %.1f-%.1f, want 50-105", c.x0, c.x1)
	}
	if c := l.cells[2]; c.x0 != 325 || c.x1 != 350 {
		t.Errorf("£2.50 spans %.1f-%.1f, want 325-350", c.x0, c.x1)
	}
	if got := lines[1].text(); got != "final 😀 €3 ä ö ü" {
		t.Errorf("second line %q", got)
	}
}

// A composite font without a ToUnicode CMap names glyphs, not
// characters: it gives no text at all (the page then goes to OCR), not
// its glyph ids as garbage.
func TestType0WithoutToUnicode(t *testing.T) {
	font := []string{
		"<< /Type /Font /Subtype /Type0 /BaseFont /Sans /Encoding /Identity-H /DescendantFonts [4 0 R] >>",
		"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /Sans /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /DW 500 >>",
	}
	content := "BT /F1 10 Tf 50 700 Td " + genType0.show("Total 12.50") + " Tj ET\n" +
		"BT /F1 10 Tf 50 680 Td <00410042> Tj ET\n"
	if lines := pageLines(t, type0Page(font, content)); len(lines) != 0 {
		t.Fatalf("read %+v", lines)
	}
}

// A Type0 font with an embedded CMap splits its codes by the CMap's
// codespace (here one byte below 0x80, two from 0x8000) and measures
// them by the CIDs its cidrange maps them to.
func TestType0EmbeddedCMap(t *testing.T) {
	enc := "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n" +
		"/CMapName /Custom def /Identity-H usecmap\n" +
		"2 begincodespacerange <00> <7F> <8000> <FFFF> endcodespacerange\n" +
		"2 begincidrange <20> <7E> 1 <8000> <80FF> 200 endcidrange\n" +
		"1 begincidchar <8100> 300 endcidchar\n" +
		"endcmap CMapName currentdict /CMap defineresource pop end end\n"
	toUni := "1 begincodespacerange <00> <FF> endcodespacerange\n" +
		"1 beginbfrange <20> <7E> <0020> endbfrange\n" +
		"2 beginbfchar <8001> <00E9> <8100> <2014> endbfchar\n"
	font := []string{
		"<< /Type /Font /Subtype /Type0 /BaseFont /Sans /Encoding 5 0 R /DescendantFonts [4 0 R] /ToUnicode 6 0 R >>",
		// ASCII is CIDs 1-95, 600 wide; é is CID 201, 1000 (DW); the
		// dash is CID 300, 2000.
		"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /Sans /DW 1000 /W [1 95 600 300 [2000]] >>",
		genStream(enc),
		genStream(toUni),
	}
	content := "BT /F1 10 Tf 50 700 Td (caf) Tj <8001> Tj <8100> Tj (ok) Tj ET\n"
	lines := pageLines(t, type0Page(font, content))
	if len(lines) != 1 || len(lines[0].cells) != 1 {
		t.Fatalf("lines %+v", lines)
	}
	c := lines[0].cells[0]
	if c.s != "café—ok" {
		t.Errorf("read %q, want café—ok", c.s)
	}
	// 5 ASCII at 6, é at 10, the dash at 20.
	if want := 50.0 + 5*6 + 10 + 20; c.x1 != want {
		t.Errorf("ends at %.1f, want %.1f", c.x1, want)
	}
}

// A simple font's ToUnicode CMap is preferred to its /Differences (whose
// glyph names here mean nothing), and the codes it leaves out keep the
// encoding; without one, the encoding reads as it always has.
func TestSimpleFontToUnicode(t *testing.T) {
	toUni := "1 begincodespacerange <00> <FF> endcodespacerange\n2 beginbfchar <41> <20AC> <42> <00660069> endbfchar\n"
	withCMap := []string{
		"<< /Type /Font /Subtype /Type1 /BaseFont /X /Encoding << /BaseEncoding /WinAnsiEncoding /Differences [65 /g1 /g2] >> /ToUnicode 4 0 R >>",
		genStream(toUni),
	}
	without := []string{"<< /Type /Font /Subtype /Type1 /BaseFont /X /Encoding << /BaseEncoding /WinAnsiEncoding /Differences [65 /Euro] >> >>"}
	noEncoding := []string{"<< /Type /Font /Subtype /TrueType /BaseFont /X /ToUnicode 4 0 R >>", genStream(toUni)}
	tests := []struct {
		name string
		font []string
		want string
	}{
		{"ToUnicode over Differences", withCMap, "€3 finC"},
		{"Differences alone", without, "€3 BnC"},
		{"ToUnicode and no encoding", noEncoding, "€3 finC"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := pageLines(t, type0Page(tt.font, "BT /F1 10 Tf 50 700 Td (A3 BnC) Tj ET\n"))
			if len(lines) != 1 || lines[0].text() != tt.want {
				t.Fatalf("read %+v, want %q", lines, tt.want)
			}
		})
	}
}

// A page whose content is a long run of stray closing delimiters is read
// (as nothing) without exhausting the stack.
func TestContentStrayDelimiters(t *testing.T) {
	content := strings.Repeat("]", 8<<20) + " BT /F1 10 Tf 50 700 Td (ok) Tj ET\n"
	lines := pageLines(t, type0Page(genHelvetica.objs, content))
	if len(lines) != 1 || lines[0].text() != "ok" {
		t.Fatalf("read %+v", lines)
	}
}

// An embedded CMap that only names a predefined one (usecmap) leaves
// two-byte codes, as Identity-H has.
func TestType0EmbeddedCMapUsesIdentity(t *testing.T) {
	font := []string{
		"<< /Type /Font /Subtype /Type0 /BaseFont /Sans /Encoding 6 0 R /DescendantFonts [4 0 R] /ToUnicode 5 0 R >>",
		genType0.objs[1],
		genType0.objs[2],
		genStream("/CIDInit /ProcSet findresource begin 12 dict begin begincmap /Identity-H usecmap endcmap end end"),
	}
	lines := pageLines(t, type0Page(font, "BT /F1 10 Tf 50 700 Td "+genType0.show("Total 12.50")+" Tj ET\n"))
	if len(lines) != 1 || lines[0].text() != "Total 12.50" || lines[0].cells[0].x1 != 105 {
		t.Fatalf("read %+v", lines)
	}
}
