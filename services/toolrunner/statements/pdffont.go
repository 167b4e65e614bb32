package statements

import (
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/ledongthuc/pdf"
)

// pdffont decodes a font's codes to text and measures them (PDF 32000-1
// §9.6-9.10). A simple font (Type1, TrueType, Type3) has one-byte codes;
// its ToUnicode CMap, when it has one, is preferred to its /Encoding and
// /Differences, which stay for the codes the CMap leaves out. A composite
// (Type0) font has codes of one to four bytes, split by its encoding CMap
// (Identity-H/V: two bytes, the code its CID; or an embedded CMap's
// codespace ranges), measured by its descendant CIDFont's /W and /DW by
// CID, and read as text only through its ToUnicode CMap: without one,
// its CIDs name glyphs, not characters, and no text is better than
// garbage (the page is then read as an image, by OCR).

// pdfFont decodes a font's codes and measures them.
type pdfFont struct {
	composite bool
	// enc is a simple font's encoding, as the PDF library reads it.
	enc       pdf.TextEncoding
	toUnicode *cmap
	// codes splits a composite font's codes and maps them to CIDs; nil
	// when codeLen bytes make a code (Identity: the code is its CID).
	codes    *cmap
	codeLen  int
	identity bool
	// utf16 fonts' codes are UTF-16 (the Uni…-UCS2 and -UTF16 CMaps).
	utf16 bool
	// noText: a composite font whose codes cannot be read as text.
	noText   bool
	widths   map[int]float64
	wranges  []widthRange
	defWidth float64
}

// widthRange is a /W entry "c_first c_last w": CIDs first to last are w
// wide. It is kept as a range so a hostile one costs nothing.
type widthRange struct {
	first, last int
	w           float64
}

const (
	maxWidths      = 1 << 16 // /W widths listed one by one
	maxWidthRanges = 1 << 14 // /W ranges
)

func loadFont(v pdf.Value) *pdfFont {
	f := &pdfFont{widths: map[int]float64{}, defWidth: 500}
	if v.IsNull() {
		return f
	}
	if v.Key("Subtype").Name() == "Type0" {
		f.loadComposite(v)
		return f
	}
	f.toUnicode = readCMapStream(v.Key("ToUnicode"))
	if f.toUnicode == nil || !v.Key("Encoding").IsNull() {
		// With no /Encoding the library would read the ToUnicode CMap
		// itself (unbounded); the codes that CMap leaves out are then
		// taken as Latin-1.
		pf := pdf.Font{V: v}
		func() {
			defer func() { _ = recover() }()
			f.enc = pf.Encoder()
		}()
	}
	first := int(v.Key("FirstChar").Int64())
	ws := v.Key("Widths")
	for i := 0; i < ws.Len() && i < 256; i++ {
		f.widths[first+i] = ws.Index(i).Float64()
	}
	return f
}

func (f *pdfFont) loadComposite(v pdf.Value) {
	f.composite = true
	f.codeLen = 2
	f.toUnicode = readCMapStream(v.Key("ToUnicode"))
	enc := v.Key("Encoding")
	switch name := enc.Name(); {
	case enc.Kind() == pdf.Stream:
		// An embedded CMap that gives no code length (it only uses a
		// predefined one, or is unreadable) leaves two-byte codes.
		m := readCMapStream(enc)
		if m != nil && (len(m.spaces) > 0 || m.codeLen > 0) {
			f.codes = m
		} else if m != nil && (m.uses == "Identity-H" || m.uses == "Identity-V") {
			f.identity = true
		}
	case name == "Identity-H" || name == "Identity-V":
		f.identity = true
	case strings.HasPrefix(name, "Uni") && (strings.Contains(name, "-UCS2-") || strings.Contains(name, "-UTF16-")):
		f.utf16 = true
	default:
		// Another predefined CMap (its tables are not carried here):
		// the ToUnicode CMap's codespace splits the codes.
		if f.toUnicode != nil && len(f.toUnicode.spaces) > 0 {
			f.codes = f.toUnicode
		}
	}
	f.noText = f.toUnicode == nil && !f.utf16
	d := v.Key("DescendantFonts").Index(0)
	f.defWidth = 1000
	if dw := d.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
		f.defWidth = dw.Float64()
	}
	f.loadW(d.Key("W"))
	sort.SliceStable(f.wranges, func(a, b int) bool { return f.wranges[a].first < f.wranges[b].first })
}

// loadW reads a CIDFont's /W array: "c [w1 w2 …]" gives CIDs c, c+1, …
// their widths; "c_first c_last w" gives them all one.
func (f *pdfFont) loadW(w pdf.Value) {
	n := w.Len()
	for i := 0; i+1 < n && i < 4*maxWidths; {
		first := int(w.Index(i).Int64())
		next := w.Index(i + 1)
		if next.Kind() == pdf.Array {
			for j := 0; j < next.Len() && len(f.widths) < maxWidths; j++ {
				f.widths[first+j] = next.Index(j).Float64()
			}
			i += 2
			continue
		}
		if i+2 >= n {
			break
		}
		if last := int(next.Int64()); last >= first && len(f.wranges) < maxWidthRanges {
			f.wranges = append(f.wranges, widthRange{first, last, w.Index(i + 2).Float64()})
		}
		i += 3
	}
}

// width is a glyph's width in thousandths of the font size. A width of
// 0 counts as missing, as it always has here.
func (f *pdfFont) width(cid int) float64 {
	if w, ok := f.widths[cid]; ok && w != 0 {
		return w
	}
	i := sort.Search(len(f.wranges), func(i int) bool { return f.wranges[i].first > cid }) - 1
	if i >= 0 && cid <= f.wranges[i].last && f.wranges[i].w != 0 {
		return f.wranges[i].w
	}
	return f.defWidth
}

// eachCode calls fn with each code in raw: its bytes, its value, and the
// CID (or, in a simple font, the code) its width is found by; -1 when
// that is not known.
func (f *pdfFont) eachCode(raw string, fn func(b string, code uint32, cid int)) {
	if !f.composite {
		for i := 0; i < len(raw); i++ {
			fn(raw[i:i+1], uint32(raw[i]), int(raw[i]))
		}
		return
	}
	for len(raw) > 0 {
		var code uint32
		var n int
		cid := -1
		switch {
		case f.codes != nil:
			code, n = f.codes.next(raw)
			if c, ok := f.codes.lookupCID(code); ok {
				cid = c
			} else if f.codes != f.toUnicode {
				cid = 0
			}
		case f.utf16 && len(raw) >= 4 && utf16.IsSurrogate(rune(codeValue(raw[:2]))):
			n = 4
			code = codeValue(raw[:4])
		default:
			n = min(f.codeLen, len(raw))
			code = codeValue(raw[:n])
			if f.identity {
				cid = int(code)
			}
		}
		fn(raw[:n], code, cid)
		raw = raw[n:]
	}
}

func (f *pdfFont) decode(raw string) string {
	if !f.composite && f.toUnicode == nil {
		return f.decodeSimple(raw)
	}
	if f.noText {
		return ""
	}
	var sb strings.Builder
	f.eachCode(raw, func(b string, code uint32, _ int) {
		if s, ok := f.toUnicode.printable(code); ok {
			sb.WriteString(s)
			return
		}
		switch {
		case !f.composite:
			sb.WriteString(f.decodeSimple(b))
		case f.utf16:
			sb.WriteString(utf16Text(b))
		}
	})
	return sb.String()
}

// decodeSimple decodes a simple font's bytes by its encoding.
func (f *pdfFont) decodeSimple(raw string) (s string) {
	if f.enc == nil {
		if f.toUnicode != nil {
			// Latin-1: each byte its own character.
			r := make([]rune, len(raw))
			for i := 0; i < len(raw); i++ {
				r[i] = rune(raw[i])
			}
			return string(r)
		}
		return raw
	}
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	return f.enc.Decode(raw)
}

// printable is a code's text by a ToUnicode CMap, when it maps it to
// something printable.
func (m *cmap) printable(code uint32) (string, bool) {
	if m == nil {
		return "", false
	}
	s, ok := m.lookupText(code)
	if !ok || strings.IndexFunc(s, func(r rune) bool { return r >= ' ' }) < 0 {
		return "", false
	}
	return s, true
}

// advance is the string's width in text space units of size 1, with the
// character and word spacing.
func (f *pdfFont) advance(raw string, size, tc, tw float64) float64 {
	w := 0.0
	f.eachCode(raw, func(b string, code uint32, cid int) {
		w += f.width(cid)/1000*size + tc
		// Word spacing applies to the single-byte code 32 (§9.3.3).
		if len(b) == 1 && code == ' ' {
			w += tw
		}
	})
	return w
}
