package statements

import (
	"io"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/ledongthuc/pdf"
)

// pdfcmap reads CMaps (PDF 32000-1 §9.7.5 and §9.10.3): a font's
// codespace ranges say how a shown string splits into codes of one to
// four bytes; a ToUnicode CMap's bfchar and bfrange entries map codes to
// text; an encoding CMap's cidchar and cidrange entries map codes to the
// CIDs a composite font's widths are indexed by.
//
// A CMap is a PostScript fragment; only its begin…end sections are read,
// with the content-stream lexer, and everything else (usecmap, the
// CIDSystemInfo dictionary, def, defineresource) is skipped. A hostile
// CMap is bounded: the bytes read, the entries kept and each entry's
// text are capped, and ranges are kept as ranges and looked up when a
// code is shown, so <00000000> <FFFFFFFF> costs what any range does.

const (
	maxCMapBytes  = 4 << 20 // of a CMap stream read
	maxCMapChars  = 1 << 16 // bfchar and cidchar entries kept
	maxCMapRanges = 1 << 14 // bfrange and cidrange entries kept
	maxCMapSpaces = 64      // codespace ranges kept
	maxCMapText   = 32      // UTF-16 units of one code's text (a ligature is a few)
)

// codespace is a codespace range: codes of n bytes whose every byte lies
// between lo's and hi's.
type codespace struct {
	lo, hi [4]byte
	n      int
}

func (c codespace) holds(b string) bool {
	if len(b) != c.n {
		return false
	}
	for i := 0; i < c.n; i++ {
		if b[i] < c.lo[i] || b[i] > c.hi[i] {
			return false
		}
	}
	return true
}

// cmapRange maps codes lo to hi: to text (bfrange), either incrementing
// from first or one entry each from list, or to CIDs incrementing from
// cid (cidrange).
type cmapRange struct {
	lo, hi uint32
	first  []uint16
	list   []string
	cid    int
}

// cmap is a parsed CMap. Codes are keyed by their value: a ToUnicode
// CMap's entries are looked up for codes split by the font's encoding,
// whose lengths they do not always repeat.
type cmap struct {
	spaces    []codespace
	text      map[uint32]string
	textRange []cmapRange
	cids      map[uint32]int
	cidRange  []cmapRange
	// codeLen splits codes when the CMap has no codespace ranges: the
	// length of its first entry's code.
	codeLen int
	// uses is the predefined CMap it names with usecmap.
	uses string
}

// readCMapStream reads a CMap from a stream, or nil when v is not one or
// cannot be read.
func readCMapStream(v pdf.Value) (m *cmap) {
	if v.Kind() != pdf.Stream {
		return nil
	}
	defer func() {
		if recover() != nil {
			m = nil
		}
	}()
	rc := v.Reader()
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxCMapBytes))
	if err != nil && len(data) == 0 {
		return nil
	}
	return parseCMap(data)
}

// parseCMap reads a CMap's sections. It never fails: what cannot be read
// is left out.
func parseCMap(data []byte) *cmap {
	m := &cmap{text: map[uint32]string{}, cids: map[uint32]int{}}
	lx := &contentLexer{b: data}
	section := ""
	var ops []cval // the operands of the entry being read
	var last cval
	for {
		tok, ok := lx.next()
		if !ok {
			break
		}
		prev := last
		last = tok
		if tok.kind == kOp {
			if tok.s == "usecmap" && prev.kind == kName {
				m.uses = prev.s
			}
			switch tok.s {
			case "begincodespacerange", "beginbfchar", "beginbfrange", "begincidchar", "begincidrange":
				section = strings.TrimPrefix(tok.s, "begin")
			default:
				section = ""
			}
			ops = ops[:0]
			continue
		}
		if section == "" {
			continue
		}
		ops = append(ops, tok)
		if m.entry(section, ops) {
			ops = ops[:0]
		}
	}
	sortRanges(m.textRange)
	sortRanges(m.cidRange)
	return m
}

// entry takes the operands read so far in a section; it reports whether
// they made an entry (kept or, when malformed or over the caps, dropped),
// so the next operand starts a new one.
func (m *cmap) entry(section string, ops []cval) bool {
	need := 3
	if section == "codespacerange" || section == "bfchar" || section == "cidchar" {
		need = 2
	}
	if len(ops) < need {
		// A source code is a string; anything else where one belongs
		// is skipped so the entries after it keep their alignment.
		return ops[len(ops)-1].kind != kString
	}
	lo := ops[0].s
	if len(lo) < 1 || len(lo) > 4 {
		return true
	}
	code := codeValue(lo)
	if m.codeLen == 0 && section != "codespacerange" {
		m.codeLen = len(lo)
	}
	switch section {
	case "codespacerange":
		hi := ops[1].s
		if ops[1].kind != kString || len(hi) != len(lo) || len(m.spaces) >= maxCMapSpaces {
			return true
		}
		c := codespace{n: len(lo)}
		copy(c.lo[:], lo)
		copy(c.hi[:], hi)
		m.spaces = append(m.spaces, c)
	case "bfchar":
		if ops[1].kind == kString && len(m.text) < maxCMapChars {
			m.text[code] = utf16Text(ops[1].s)
		}
	case "cidchar":
		if ops[1].kind == kNum && len(m.cids) < maxCMapChars {
			m.cids[code] = int(ops[1].num)
		}
	case "bfrange", "cidrange":
		hi := ops[1].s
		if ops[1].kind != kString || len(hi) != len(lo) || codeValue(hi) < code {
			return true
		}
		r := cmapRange{lo: code, hi: codeValue(hi)}
		dst := ops[2]
		switch {
		case section == "cidrange" && dst.kind == kNum && len(m.cidRange) < maxCMapRanges:
			r.cid = int(dst.num)
			m.cidRange = append(m.cidRange, r)
		case section == "bfrange" && dst.kind == kString && len(m.textRange) < maxCMapRanges:
			r.first = utf16Units(dst.s)
			m.textRange = append(m.textRange, r)
		case section == "bfrange" && dst.kind == kArray && len(m.textRange) < maxCMapRanges:
			for _, d := range dst.arr {
				r.list = append(r.list, utf16Text(d.s))
			}
			m.textRange = append(m.textRange, r)
		}
	}
	return true
}

func sortRanges(rs []cmapRange) {
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].lo < rs[b].lo })
}

// findRange is the range holding code: the last one starting at or
// before it (overlapping ranges are not looked through).
func findRange(rs []cmapRange, code uint32) (cmapRange, bool) {
	i := sort.Search(len(rs), func(i int) bool { return rs[i].lo > code }) - 1
	if i < 0 || code > rs[i].hi {
		return cmapRange{}, false
	}
	return rs[i], true
}

// next splits the first code off raw and returns its value and length.
// A code in no codespace range takes the length of the range its first
// byte starts, or else the shortest range's (§9.7.6.3), so one bad code
// does not shift the rest.
func (m *cmap) next(raw string) (uint32, int) {
	if len(m.spaces) == 0 {
		n := min(max(m.codeLen, 1), len(raw))
		return codeValue(raw[:n]), n
	}
	for n := 1; n <= 4 && n <= len(raw); n++ {
		for _, c := range m.spaces {
			if c.holds(raw[:n]) {
				return codeValue(raw[:n]), n
			}
		}
	}
	n := 4
	for _, c := range m.spaces {
		n = min(n, c.n)
	}
	for _, c := range m.spaces {
		if raw[0] >= c.lo[0] && raw[0] <= c.hi[0] {
			n = c.n
			break
		}
	}
	n = min(n, len(raw))
	return codeValue(raw[:n]), n
}

// lookupText is a code's text, and whether the CMap maps it.
func (m *cmap) lookupText(code uint32) (string, bool) {
	if s, ok := m.text[code]; ok {
		return s, true
	}
	r, ok := findRange(m.textRange, code)
	if !ok {
		return "", false
	}
	off := code - r.lo
	if r.list != nil {
		if uint64(off) < uint64(len(r.list)) {
			return r.list[off], true
		}
		return "", false
	}
	if len(r.first) == 0 {
		return "", false
	}
	// The destination's last unit counts up through the range; the
	// units before it stay (a range never crosses them in practice).
	u := append([]uint16(nil), r.first...)
	u[len(u)-1] += uint16(off)
	return string(utf16.Decode(u)), true
}

// lookupCID is a code's CID, and whether the CMap maps it.
func (m *cmap) lookupCID(code uint32) (int, bool) {
	if c, ok := m.cids[code]; ok {
		return c, true
	}
	r, ok := findRange(m.cidRange, code)
	if !ok {
		return 0, false
	}
	return r.cid + int(code-r.lo), true
}

func codeValue(b string) uint32 {
	var v uint32
	for i := 0; i < len(b) && i < 4; i++ {
		v = v<<8 | uint32(b[i])
	}
	return v
}

// utf16Units reads UTF-16BE, capped at maxCMapText units; an odd last
// byte is dropped.
func utf16Units(b string) []uint16 {
	n := min(len(b)/2, maxCMapText)
	u := make([]uint16, n)
	for i := range u {
		u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	return u
}

// utf16Text is a destination's text. A one-byte destination, which
// some writers put in place of UTF-16, is taken as that character.
func utf16Text(b string) string {
	if len(b) == 1 {
		return string(rune(b[0]))
	}
	return string(utf16.Decode(utf16Units(b)))
}
