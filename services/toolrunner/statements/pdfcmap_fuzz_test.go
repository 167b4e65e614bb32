package statements

import (
	"testing"
	"unicode/utf8"
)

// FuzzCMap reads any CMap and any shown string without panicking or
// stalling: every code split off takes one to four bytes, every code's
// text is within the cap, and a composite font built on the CMap
// decodes and measures the string.
func FuzzCMap(f *testing.F) {
	f.Add([]byte(genType0CMap), []byte("\x10\x41\x20\x07\x20\x08\x00\x00"))
	f.Add([]byte("2 begincodespacerange <00> <80> <8140> <9FFC> endcodespacerange 1 beginbfrange <20> <7E> <0020> endbfrange 1 beginbfchar <8145> <30FB> endbfchar"), []byte("a\x81\x45b\x81"))
	f.Add([]byte("1 begincodespacerange <00000000> <FFFFFFFF> endcodespacerange 1 beginbfrange <00000000> <FFFFFFFF> [<0041> <D83DDE00>] endbfrange"), []byte("\x00\x00\x00\x01\xff"))
	f.Add([]byte("2 begincidrange <20> <7E> 1 <8000> <80FF> 200 endcidrange 1 begincidchar <8100> 300 endcidchar /Identity-H usecmap"), []byte("ab\x80\x01\x81\x00"))
	f.Add([]byte("1 beginbfrange <41> <40> <0041> ]]]] <<< (((( endbfrange"), []byte("A"))
	f.Fuzz(func(t *testing.T, data, raw []byte) {
		if len(data) > 1<<16 || len(raw) > 1<<12 {
			return
		}
		m := parseCMap(data)
		if len(m.text) > maxCMapChars || len(m.cids) > maxCMapChars || len(m.textRange) > maxCMapRanges || len(m.cidRange) > maxCMapRanges || len(m.spaces) > maxCMapSpaces {
			t.Fatalf("kept %d chars, %d ranges, %d spaces", len(m.text)+len(m.cids), len(m.textRange)+len(m.cidRange), len(m.spaces))
		}
		for rest := string(raw); len(rest) > 0; {
			code, n := m.next(rest)
			if n < 1 || n > 4 || n > len(rest) {
				t.Fatalf("split %d bytes off %q", n, rest)
			}
			if s, ok := m.lookupText(code); ok && utf8.RuneCountInString(s) > maxCMapText {
				t.Fatalf("code %x reads as %d characters", code, utf8.RuneCountInString(s))
			}
			rest = rest[n:]
		}
		font := &pdfFont{composite: true, codes: m, toUnicode: m, codeLen: 2, widths: map[int]float64{}, defWidth: 1000}
		if s := font.decode(string(raw)); utf8.RuneCountInString(s) > len(raw)*maxCMapText {
			t.Fatalf("%d bytes decode to %d characters", len(raw), utf8.RuneCountInString(s))
		}
		if w := font.advance(string(raw), 10, 0, 0); w < 0 || w > float64(len(raw))*10 {
			t.Fatalf("%d bytes %.1f wide", len(raw), w)
		}
	})
}
