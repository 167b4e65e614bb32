package statements

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"golang.org/x/text/encoding/charmap"
)

// genPDF writes a bank statement PDF of pages pages with rows
// transactions each, laid out as banks print them: a header on every page,
// the date only on a day's first row, descriptions over two lines on
// every third transaction, paid-out and paid-in columns, a running
// balance, and balance brought/carried forward rows. It returns the file,
// the transaction count and their sum in pence.
func genPDF(pages, rows int) ([]byte, int, int64) {
	return genPDFFont(pages, rows, genHelvetica)
}

// genPDFFont is genPDF with its text in font.
func genPDFFont(pages, rows int, font genFont) ([]byte, int, int64) {
	var objs []string
	// 1 catalog, 2 pages, 3 font (and its other objects), then
	// page/content pairs.
	objs = append(objs, "<< /Type /Catalog /Pages 2 0 R >>", "")
	objs = append(objs, font.objs...)
	var kids []string
	bal := int64(100000)
	count, sum := 0, int64(0)
	day := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	money := func(v int64) string { return fmt.Sprintf("%d.%02d", v/100, v%100) }
	for p := 0; p < pages; p++ {
		var c strings.Builder
		text := func(x, y float64, s string) {
			fmt.Fprintf(&c, "BT /F1 9 Tf 1 0 0 1 %.1f %.1f Tm %s Tj ET\n", x, y, font.show(s))
		}
		right := func(xr, y float64, s string) { text(xr-float64(len(s))*5, y, s) }
		text(50, 800, "Your Statement")
		text(50, 785, fmt.Sprintf("1 March to 31 December 2024   Sheet %d", p+1))
		y := 750.0
		text(50, y, "Date")
		text(110, y, "Details")
		text(330, y, "Paid out")
		text(410, y, "Paid in")
		text(490, y, "Balance")
		y -= 14
		text(110, y, "BALANCE BROUGHT FORWARD")
		right(540, y, money(bal))
		y -= 12
		for r := 0; r < rows; r++ {
			first := r%2 == 0
			if first {
				day = day.AddDate(0, 0, 1)
				text(50, y, day.Format("02 Jan 06"))
			}
			amt := int64(100 + (p*rows+r)*37%9000)
			in := (p*rows+r)%7 == 0
			desc := fmt.Sprintf("CARD PAYMENT SHOP %d", (p*rows+r)%97)
			if in {
				desc = "TRANSFER FROM SAVINGS"
			}
			if r%3 == 0 {
				text(110, y, desc)
				y -= 12
				desc = "LONDON GB"
			}
			text(110, y, desc)
			if in {
				right(450, y, money(amt))
				bal += amt
				sum += amt
			} else {
				right(370, y, money(amt))
				bal -= amt
				sum -= amt
			}
			count++
			if r == rows-1 || !first {
				right(540, y, money(bal))
			}
			y -= 12
		}
		text(110, y, "BALANCE CARRIED FORWARD")
		right(540, y, money(bal))
		content := c.String()
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", len(objs)+2))
		kids = append(kids, fmt.Sprintf("%d 0 R", len(objs)))
		objs = append(objs, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content)+1, content))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages)
	return assemblePDF(objs), count, sum
}

// genFont is the font a generated PDF's text is in: its objects, the
// font first as object 3, and how a string is written in it.
type genFont struct {
	objs []string
	show func(s string) string
}

// genHelvetica is a simple font, the string's bytes its codes.
var genHelvetica = genFont{
	objs: []string{"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"},
	show: func(s string) string { return "(" + genEscape(s) + ")" },
}

func genEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}

// genType0 is a composite font as modern PDF writers embed one (the font
// program itself left out): Type0 with Identity-H, two-byte glyph ids
// that are not the characters' codes, a ToUnicode CMap with bfchar
// entries and both forms of bfrange, and /W widths in both forms over a
// /DW that would be wrong. Every glyph is 500 units wide, as Helvetica
// is without a widths table, so a page reads as genHelvetica's does.
var genType0 = genFont{
	objs: []string{
		"<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+Sans /Encoding /Identity-H /DescendantFonts [4 0 R] /ToUnicode 5 0 R >>",
		"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /ABCDEF+Sans /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> " +
			"/DW 1000 /W [4128 4222 500 8192 [500 500 500 500 500 500 500 500 500 500 500 500 500 500 500 500 500 500]] >>",
		genStream(genType0CMap),
	},
	show: func(s string) string {
		var b strings.Builder
		b.WriteByte('<')
		for _, r := range s {
			fmt.Fprintf(&b, "%04X", genGlyph(r))
		}
		b.WriteByte('>')
		return b.String()
	},
}

// genType0Specials are genType0's glyphs 0x2000 on, mapped one by one:
// accented letters, currency signs, a ligature, a character outside the
// BMP.
var genType0Specials = []string{"£", "€", "ä", "ö", "ü", "é", "ß", "fi", "😀"}

// genGlyph is a character's glyph id in genType0: ASCII from 0x1020,
// the specials from 0x2000, anything else the missing glyph 0.
func genGlyph(r rune) int {
	if r >= 0x20 && r <= 0x7e {
		return 0x1000 + int(r)
	}
	for i, sp := range genType0Specials {
		if string(r) == sp || (sp == "fi" && r == 'ﬁ') {
			return 0x2000 + i
		}
	}
	return 0
}

var genType0CMap = func() string {
	var b strings.Builder
	b.WriteString("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n" +
		"/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n" +
		"/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n" +
		"1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n" +
		"4 beginbfrange\n<1020> <1040> <0020>\n<1041> <105A> <0041>\n" +
		"<105B> <1060> [<005B> <005C> <005D> <005E> <005F> <0060>]\n<1061> <107E> <0061>\nendbfrange\n")
	fmt.Fprintf(&b, "%d beginbfchar\n", len(genType0Specials))
	for i, sp := range genType0Specials {
		fmt.Fprintf(&b, "<%04X> <", 0x2000+i)
		for _, u := range utf16.Encode([]rune(sp)) {
			fmt.Fprintf(&b, "%04X", u)
		}
		b.WriteString(">\n")
	}
	b.WriteString("endbfchar\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n")
	return b.String()
}()

// genStream is a stream object holding data.
func genStream(data string) string {
	return fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(data)+1, data)
}

// assemblePDF writes objs (object 1 the catalog) as a PDF file with its
// cross-reference table.
func assemblePDF(objs []string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func makePDF(pages, rows int) []byte {
	b, _, _ := genPDF(pages, rows)
	return b
}

func TestGeneratedPDF(t *testing.T) {
	data, count, sum := genPDF(3, 30)
	r, err := Parse("generated.pdf", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	for _, tx := range r.Transactions {
		got += tx.AmountMinor
		if tx.Currency != "" || tx.Description == "" {
			t.Fatalf("%+v", tx)
		}
	}
	if len(r.Transactions) != count || got != sum {
		t.Fatalf("%d transactions summing %d, want %d summing %d (layout %q)", len(r.Transactions), got, count, sum, r.Layout)
	}
	if d := r.Transactions[0].Description; d != "TRANSFER FROM SAVINGS LONDON GB" {
		t.Fatalf("a description over two lines read as %q", d)
	}
}

// genItem is a string placed on a page: from x, or ending at x (right),
// as statements align their figures.
type genItem struct {
	x, y  float64
	s     string
	right bool
}

// genCharWidth is a character's width at size 9 in the generated files
// (Helvetica without a widths table: 500 units).
const genCharWidth = 4.5

// buildPDF writes pages of placed strings as a text-layer PDF, one
// string a text object, in WinAnsi ("£", "€", "ä" as a bank's PDF has them).
func buildPDF(pages [][]genItem) []byte {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"}
	var kids []string
	enc := charmap.Windows1252.NewEncoder()
	for _, items := range pages {
		var c strings.Builder
		for _, it := range items {
			raw, err := enc.String(it.s)
			if err != nil {
				raw = it.s
			}
			x := it.x
			if it.right {
				x -= float64(len(raw)) * genCharWidth
			}
			raw = strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(raw)
			fmt.Fprintf(&c, "BT /F1 9 Tf 1 0 0 1 %.1f %.1f Tm (%s) Tj ET\n", x, it.y, raw)
		}
		content := c.String()
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>", len(objs)+2))
		kids = append(kids, fmt.Sprintf("%d 0 R", len(objs)))
		objs = append(objs, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content)+1, content))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages))
	return assemblePDF(objs)
}

// stmtWriter lays out a statement line by line: at and right place
// strings on the current line, nl moves down a line, page starts a page.
type stmtWriter struct {
	pages [][]genItem
	y     float64
}

func newStmt() *stmtWriter { w := &stmtWriter{}; w.page(); return w }

func (w *stmtWriter) page() { w.pages = append(w.pages, nil); w.y = 800 }

func (w *stmtWriter) at(x float64, s string) *stmtWriter {
	p := &w.pages[len(w.pages)-1]
	*p = append(*p, genItem{x: x, y: w.y, s: s})
	return w
}

func (w *stmtWriter) right(x float64, s string) *stmtWriter {
	p := &w.pages[len(w.pages)-1]
	*p = append(*p, genItem{x: x, y: w.y, s: s, right: true})
	return w
}

func (w *stmtWriter) nl() *stmtWriter { w.y -= 12; return w }

func (w *stmtWriter) gap(n float64) *stmtWriter { w.y -= n; return w }

func (w *stmtWriter) pdf() []byte { return buildPDF(w.pages) }
