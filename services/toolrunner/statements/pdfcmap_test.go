package statements

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// cmapRead splits raw into codes by m and reads each by its ToUnicode
// entries, "?" for a code it does not map.
func cmapRead(m *cmap, raw string) string {
	var sb strings.Builder
	for len(raw) > 0 {
		code, n := m.next(raw)
		if s, ok := m.lookupText(code); ok {
			sb.WriteString(s)
		} else {
			sb.WriteString("?")
		}
		raw = raw[n:]
	}
	return sb.String()
}

func TestParseCMap(t *testing.T) {
	tests := []struct {
		name, cmap, give, want string
	}{
		{
			name: "bfchar",
			cmap: "1 begincodespacerange <0000> <FFFF> endcodespacerange 2 beginbfchar <0003> <0020> <0024> <0041> endbfchar",
			give: "\x00\x24\x00\x03\x00\x24\x00\x99", want: "A A?",
		},
		{
			name: "bfrange counting up",
			cmap: "1 begincodespacerange <0000> <FFFF> endcodespacerange 1 beginbfrange <0010> <0019> <0030> endbfrange",
			give: "\x00\x10\x00\x19\x00\x1a", want: "09?",
		},
		{
			name: "bfrange array",
			cmap: "1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfrange <41> <43> [<0058> <00660069> <D83DDE00>] endbfrange",
			give: "ABCD", want: "Xfi😀?",
		},
		{
			name: "surrogate pair counting up",
			cmap: "1 begincodespacerange <0000> <FFFF> endcodespacerange 1 beginbfrange <0001> <0002> <D83DDE00> endbfrange",
			give: "\x00\x01\x00\x02", want: "😀😁",
		},
		{
			name: "mixed code lengths",
			cmap: "2 begincodespacerange <00> <80> <8140> <9FFC> endcodespacerange " +
				"1 beginbfrange <20> <7E> <0020> endbfrange 1 beginbfchar <8145> <30FB> endbfchar",
			give: "a\x81\x45b", want: "a・b",
		},
		{
			// A code in no codespace takes the length of the range its
			// first byte starts, so the codes after it stay in step.
			name: "code outside the codespace",
			cmap: "2 begincodespacerange <00> <7F> <8140> <9FFC> endcodespacerange 1 beginbfrange <20> <7E> <0020> endbfrange",
			give: "a\x81\x20b", want: "a?b",
		},
		{
			name: "no codespace: the entries' length",
			cmap: "1 beginbfchar <0041> <0061> endbfchar",
			give: "\x00\x41\x00\x41", want: "aa",
		},
		{
			name: "a range of every four-byte code",
			cmap: "1 begincodespacerange <00000000> <FFFFFFFF> endcodespacerange 1 beginbfrange <00000000> <FFFFFFFF> <0000> endbfrange",
			give: "\x00\x00\x00\x41\x00\x00\x00\x42", want: "AB",
		},
		{
			name: "usecmap and PostScript around it are skipped",
			cmap: "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def " +
				"/Adobe-Identity-UCS usecmap 1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfchar <41> (\x00Z) endbfchar endcmap CMapName currentdict /CMap defineresource pop end end",
			give: "A", want: "Z",
		},
		{
			name: "malformed entries are skipped, the rest kept",
			cmap: "1 begincodespacerange <00> <FF> endcodespacerange 4 beginbfrange /x <42> <41> <0062> <43> <0045> <0063> <44> <44> <0064> endbfrange " +
				"3 beginbfchar 12 <45> <0065> <4647> <0066> endbfchar",
			give: "BDEF", want: "?de?",
		},
		{
			name: "a one-byte destination is that character",
			cmap: "1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfchar <41> <5A> endbfchar",
			give: "A", want: "Z",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cmapRead(parseCMap([]byte(tt.cmap)), tt.give); got != tt.want {
				t.Errorf("read %q, want %q", got, tt.want)
			}
		})
	}
}

// A hostile CMap keeps no more than the caps, however many entries it
// lists.
func TestParseCMapBounded(t *testing.T) {
	var b strings.Builder
	n := maxCMapChars + 1000
	fmt.Fprintf(&b, "%d beginbfchar\n", n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<%08X> <%04X>\n", i, i%0xD000)
	}
	b.WriteString("endbfchar\n")
	fmt.Fprintf(&b, "%d beginbfrange\n", n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<%08X> <FFFFFFFF> <%s>\n", i, strings.Repeat("0041", 40))
	}
	b.WriteString("endbfrange\n")
	m := parseCMap([]byte(b.String()))
	if len(m.text) != maxCMapChars || len(m.textRange) != maxCMapRanges {
		t.Fatalf("kept %d chars and %d ranges", len(m.text), len(m.textRange))
	}
	if s, ok := m.lookupText(0xFFFFFFF0); !ok || utf8.RuneCountInString(s) != maxCMapText {
		t.Fatalf("a range's text %q", s)
	}
}
