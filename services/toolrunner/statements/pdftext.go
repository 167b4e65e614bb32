package statements

import (
	"bytes"
	"crypto/md5"
	"crypto/rc4"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
)

// pdftext reads a PDF page's text with its positions. The PDF objects
// (cross-references, streams and their filters, simple fonts' encodings)
// come from github.com/ledongthuc/pdf; the content stream is interpreted
// here, because statements need what that package's own text walkers do
// not keep: the full text matrix (Td, TD, T*, TJ kerning, cm, form
// XObjects) and tolerance of inline images. Composite fonts and
// ToUnicode CMaps are read here too (pdffont.go, pdfcmap.go), bounded
// against hostile files as the library's CMap reader is not.

// textRun is one shown string: its baseline y, its x extent, and its size.
type textRun struct {
	x0, x1, y, size float64
	s               string
}

type pdfMatrix [6]float64

var identity = pdfMatrix{1, 0, 0, 1, 0, 0}

func (m pdfMatrix) mul(n pdfMatrix) pdfMatrix {
	return pdfMatrix{
		m[0]*n[0] + m[1]*n[2], m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2], m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4], m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

// pageText interprets a page's content and returns its text runs.
type pageText struct {
	runs []textRun
	ops  int
	// space is the last string shown if it was only white space.
	space *textRun
}

// spaceBefore keeps a space shown by itself between two words: it
// starts the next word when that follows it on its baseline. Without
// it, words a narrow space glyph apart would read as one, their gap
// being too small for a space when runs are grouped into lines.
func (pt *pageText) spaceBefore(r *textRun) {
	sp := pt.space
	pt.space = nil
	if sp == nil || len(pt.runs) == 0 {
		return
	}
	prev := pt.runs[len(pt.runs)-1]
	last, _ := utf8.DecodeLastRuneInString(prev.s)
	first, _ := utf8.DecodeRuneInString(r.s)
	tol := max(0.5, sp.size*0.3)
	if math.Abs(sp.y-r.y) > tol || math.Abs(prev.y-r.y) > tol ||
		math.Abs(sp.x0-prev.x1) > tol || math.Abs(r.x0-sp.x1) > tol ||
		!unicode.IsLetter(last) || !unicode.IsLetter(first) {
		return
	}
	r.s = " " + r.s
}

// maxOps bounds the operators interpreted on one page, and maxRuns the
// strings kept: a hostile file cannot make the interpreter run for ever.
const (
	maxOps  = 2_000_000
	maxRuns = 200_000
)

var errTooComplex = errors.New("the PDF page is too complex")

func readPageText(p pdf.Page) (runs []textRun, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pdf: %v", r)
		}
	}()
	pt := &pageText{}
	if err := pt.content(p.V.Key("Contents"), p.Resources(), identity, 0); err != nil {
		return pt.runs, err
	}
	return pt.runs, nil
}

// streamBytes reads a stream or an array of streams.
func streamBytes(v pdf.Value) ([]byte, error) {
	var buf bytes.Buffer
	read := func(s pdf.Value) error {
		rc := s.Reader()
		defer rc.Close()
		_, err := io.Copy(&buf, io.LimitReader(rc, 64<<20))
		buf.WriteByte('\n')
		return err
	}
	if v.Kind() == pdf.Array {
		for i := 0; i < v.Len(); i++ {
			if err := read(v.Index(i)); err != nil {
				return buf.Bytes(), err
			}
		}
		return buf.Bytes(), nil
	}
	if v.Kind() != pdf.Stream {
		return nil, nil
	}
	err := read(v)
	return buf.Bytes(), err
}

type gstate struct {
	ctm                pdfMatrix
	tc, tw, th, tl, ts float64
	font               *pdfFont
	size               float64
}

func (pt *pageText) content(strm, res pdf.Value, ctm pdfMatrix, depth int) error {
	data, err := streamBytes(strm)
	if err != nil && len(data) == 0 {
		return err
	}
	lx := &contentLexer{b: data}
	g := gstate{ctm: ctm, th: 1}
	var stack []gstate
	var tm, tlm pdfMatrix
	var args []cval
	fonts := map[string]*pdfFont{}
	show := func(raw string) {
		if g.font == nil {
			g.font = loadFont(pdf.Value{})
		}
		trm := pdfMatrix{g.size * g.th, 0, 0, g.size, 0, g.ts}.mul(tm).mul(g.ctm)
		adv := g.font.advance(raw, g.size, g.tc, g.tw) * g.th
		start := tm.mul(g.ctm)
		end := pdfMatrix{1, 0, 0, 1, adv, 0}.mul(tm).mul(g.ctm)
		size := math.Hypot(trm[2], trm[3])
		s := g.font.decode(raw)
		switch {
		case s != "" && strings.TrimSpace(s) == "":
			pt.space = &textRun{x0: start[4], x1: end[4], y: trm[5], size: size}
		case s != "" && len(pt.runs) < maxRuns:
			r := textRun{x0: start[4], x1: end[4], y: trm[5], size: size, s: s}
			pt.spaceBefore(&r)
			pt.runs = append(pt.runs, r)
		}
		tm = pdfMatrix{1, 0, 0, 1, adv, 0}.mul(tm)
	}
	for {
		tok, ok := lx.next()
		if !ok {
			break
		}
		if tok.kind != kOp {
			if len(args) < 64 {
				args = append(args, tok)
			}
			continue
		}
		pt.ops++
		if pt.ops > maxOps {
			return errTooComplex
		}
		num := func(i int) float64 {
			if i < len(args) {
				return args[i].num
			}
			return 0
		}
		switch tok.s {
		case "q":
			if len(stack) < 64 {
				stack = append(stack, g)
			}
		case "Q":
			if n := len(stack); n > 0 {
				g, stack = stack[n-1], stack[:n-1]
			}
		case "cm":
			if len(args) == 6 {
				g.ctm = pdfMatrix{num(0), num(1), num(2), num(3), num(4), num(5)}.mul(g.ctm)
			}
		case "BT":
			tm, tlm = identity, identity
		case "Tf":
			if len(args) == 2 {
				f, ok := fonts[args[0].s]
				if !ok {
					f = loadFont(res.Key("Font").Key(args[0].s))
					fonts[args[0].s] = f
				}
				g.font = f
				g.size = num(1)
			}
		case "Tc":
			g.tc = num(0)
		case "Tw":
			g.tw = num(0)
		case "Tz":
			g.th = num(0) / 100
		case "TL":
			g.tl = num(0)
		case "Ts":
			g.ts = num(0)
		case "Td":
			tlm = pdfMatrix{1, 0, 0, 1, num(0), num(1)}.mul(tlm)
			tm = tlm
		case "TD":
			g.tl = -num(1)
			tlm = pdfMatrix{1, 0, 0, 1, num(0), num(1)}.mul(tlm)
			tm = tlm
		case "Tm":
			if len(args) == 6 {
				tlm = pdfMatrix{num(0), num(1), num(2), num(3), num(4), num(5)}
				tm = tlm
			}
		case "T*":
			tlm = pdfMatrix{1, 0, 0, 1, 0, -g.tl}.mul(tlm)
			tm = tlm
		case "Tj":
			if len(args) >= 1 {
				show(args[len(args)-1].s)
			}
		case "'", "\"":
			if tok.s == "\"" && len(args) == 3 {
				g.tw, g.tc = num(0), num(1)
			}
			tlm = pdfMatrix{1, 0, 0, 1, 0, -g.tl}.mul(tlm)
			tm = tlm
			if len(args) >= 1 {
				show(args[len(args)-1].s)
			}
		case "TJ":
			if len(args) >= 1 {
				for _, e := range args[len(args)-1].arr {
					if e.kind == kString {
						show(e.s)
					} else if e.kind == kNum {
						tm = pdfMatrix{1, 0, 0, 1, -e.num / 1000 * g.size * g.th, 0}.mul(tm)
					}
				}
			}
		case "Do":
			if len(args) == 1 && depth < 4 {
				x := res.Key("XObject").Key(args[0].s)
				if x.Key("Subtype").Name() == "Form" {
					m := identity
					if mv := x.Key("Matrix"); mv.Len() == 6 {
						m = pdfMatrix{mv.Index(0).Float64(), mv.Index(1).Float64(), mv.Index(2).Float64(), mv.Index(3).Float64(), mv.Index(4).Float64(), mv.Index(5).Float64()}
					}
					r := x.Key("Resources")
					if r.IsNull() {
						r = res
					}
					if err := pt.content(x, r, m.mul(g.ctm), depth+1); err != nil {
						return err
					}
				}
			}
		}
		args = args[:0]
	}
	return nil
}

// The content-stream lexer.

type ckind int

const (
	kNum ckind = iota + 1
	kString
	kName
	kOp
	kArray
	kDict
)

type cval struct {
	kind ckind
	num  float64
	s    string
	arr  []cval
}

type contentLexer struct {
	b   []byte
	pos int
}

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPDFDelim(c byte) bool {
	return strings.IndexByte("()<>[]{}/%", c) >= 0
}

func (l *contentLexer) skipSpace() {
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		if isPDFSpace(c) {
			l.pos++
		} else if c == '%' {
			for l.pos < len(l.b) && l.b[l.pos] != '\n' && l.b[l.pos] != '\r' {
				l.pos++
			}
		} else {
			return
		}
	}
}

func (l *contentLexer) next() (cval, bool) {
	return l.value(0)
}

func (l *contentLexer) value(depth int) (cval, bool) {
	// Stray closing delimiters are skipped in a loop: skipped by
	// recursion, a run of them would overflow the stack.
	l.skipSpace()
	for l.pos < len(l.b) && strings.IndexByte("]>){}", l.b[l.pos]) >= 0 {
		l.pos++
		l.skipSpace()
	}
	if l.pos >= len(l.b) {
		return cval{}, false
	}
	c := l.b[l.pos]
	switch {
	case c == '(':
		return cval{kind: kString, s: l.literal()}, true
	case c == '<' && l.pos+1 < len(l.b) && l.b[l.pos+1] == '<':
		l.pos += 2
		for depth < 32 {
			l.skipSpace()
			if l.pos+1 < len(l.b) && l.b[l.pos] == '>' && l.b[l.pos+1] == '>' {
				l.pos += 2
				break
			}
			if _, ok := l.value(depth + 1); !ok {
				break
			}
		}
		return cval{kind: kDict}, true
	case c == '<':
		return cval{kind: kString, s: l.hex()}, true
	case c == '[':
		l.pos++
		var arr []cval
		for depth < 32 {
			l.skipSpace()
			if l.pos >= len(l.b) {
				break
			}
			if l.b[l.pos] == ']' {
				l.pos++
				break
			}
			v, ok := l.value(depth + 1)
			if !ok {
				break
			}
			if len(arr) < 4096 {
				arr = append(arr, v)
			}
		}
		return cval{kind: kArray, arr: arr}, true
	case c == '/':
		l.pos++
		start := l.pos
		for l.pos < len(l.b) && !isPDFSpace(l.b[l.pos]) && !isPDFDelim(l.b[l.pos]) {
			l.pos++
		}
		return cval{kind: kName, s: string(l.b[start:l.pos])}, true
	}
	start := l.pos
	for l.pos < len(l.b) && !isPDFSpace(l.b[l.pos]) && !isPDFDelim(l.b[l.pos]) {
		l.pos++
	}
	w := string(l.b[start:l.pos])
	if f, err := strconv.ParseFloat(w, 64); err == nil {
		return cval{kind: kNum, num: f}, true
	}
	if w == "ID" {
		l.skipInlineImage()
		return cval{kind: kOp, s: "EI"}, true
	}
	return cval{kind: kOp, s: w}, true
}

// skipInlineImage skips an inline image's data to its EI.
func (l *contentLexer) skipInlineImage() {
	if l.pos < len(l.b) {
		l.pos++ // the single white-space after ID
	}
	for i := l.pos; i+2 <= len(l.b); i++ {
		if l.b[i] == 'E' && l.b[i+1] == 'I' && (i == 0 || isPDFSpace(l.b[i-1])) && (i+2 == len(l.b) || isPDFSpace(l.b[i+2])) {
			l.pos = i + 2
			return
		}
	}
	l.pos = len(l.b)
}

func (l *contentLexer) literal() string {
	l.pos++ // (
	var sb strings.Builder
	nest := 1
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		l.pos++
		switch c {
		case '(':
			nest++
		case ')':
			nest--
			if nest == 0 {
				return sb.String()
			}
		case '\\':
			if l.pos >= len(l.b) {
				return sb.String()
			}
			e := l.b[l.pos]
			l.pos++
			switch e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r', '\n':
				if e == '\r' && l.pos < len(l.b) && l.b[l.pos] == '\n' {
					l.pos++
				}
				continue
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for k := 0; k < 2 && l.pos < len(l.b) && l.b[l.pos] >= '0' && l.b[l.pos] <= '7'; k++ {
						v = v*8 + int(l.b[l.pos]-'0')
						l.pos++
					}
					c = byte(v)
				} else {
					c = e
				}
			}
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

func (l *contentLexer) hex() string {
	l.pos++ // <
	var out []byte
	var hi int = -1
	for l.pos < len(l.b) {
		c := l.b[l.pos]
		l.pos++
		if c == '>' {
			break
		}
		v := unhex(c)
		if v < 0 {
			continue
		}
		if hi < 0 {
			hi = v
		} else {
			out = append(out, byte(hi<<4|v))
			hi = -1
		}
	}
	if hi >= 0 {
		out = append(out, byte(hi<<4))
	}
	return string(out)
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// Files encrypted with RC4 keys shorter than 88 bits.
//
// A PDF's objects are encrypted with keys made from the file key and
// the object's number; by the standard (PDF 32000-1 §7.6.2, algorithm 1)
// such a key is the first n+5 bytes of an MD5 sum, n the file key's
// length, and at most 16. The PDF library keeps all 16 bytes, so a file
// with a 40-bit key (as some e-mailed receipts are, with an empty user
// password: anyone may open them) reads as noise to it. decryptWeakRC4
// decrypts such a file in place, before the library reads it: streams
// and strings keep their lengths (RC4 is a stream cipher), so every
// offset stays right, and the /Encrypt entry is blanked out.

// passwordPad is the standard's padding of an empty password.
var passwordPad = []byte("\x28\xbf\x4e\x5e\x4e\x75\x8a\x41\x64\x00\x4e\x56\xff\xfa\x01\x08\x2e\x2e\x00\xb6\xd0\x68\x3e\x80\x2f\x0c\xa9\xfe\x64\x53\x69\x7a")

var (
	reEncryptRef = regexp.MustCompile(`/Encrypt\s*(\d+)\s+(\d+)\s+R`)
	reFileID     = regexp.MustCompile(`/ID\s*\[\s*<([0-9A-Fa-f\s]*)>`)
	reStreamKw   = regexp.MustCompile(`\bstream(\r\n|\n|\r)`)
)

// maxCryptObjects bounds the objects decrypted.
const maxCryptObjects = 1 << 20

// decryptWeakRC4 returns data decrypted when it is a PDF encrypted with
// an RC4 key shorter than 88 bits and an empty user password, and data
// itself otherwise (the library then reads it, or reports it protected).
func decryptWeakRC4(data []byte) []byte {
	if !bytes.Contains(data, []byte("/Encrypt")) {
		return data
	}
	refs := reEncryptRef.FindAllSubmatchIndex(data, -1)
	if len(refs) == 0 {
		return data
	}
	last := refs[len(refs)-1]
	encNum := string(data[last[2]:last[3]])
	dict := objectDict(data, encNum)
	idm := reFileID.FindAllSubmatch(data, -1)
	if dict == nil || len(idm) == 0 {
		return data
	}
	id := unhexString(string(idm[len(idm)-1][1]))
	key := emptyPasswordKey(dict, id)
	if key == nil {
		return data
	}
	out := bytes.Clone(data)
	decryptObjects(out, key, encNum)
	for _, r := range refs {
		for i := r[0]; i < r[1]; i++ {
			out[i] = ' '
		}
	}
	return out
}

// objectDict reads the top-level entries of object num's dictionary.
func objectDict(data []byte, num string) map[string]cval {
	want, err := strconv.Atoi(num)
	if err != nil {
		return nil
	}
	for pos, n := 0, 0; n < maxCryptObjects; n++ {
		o, ok := nextObject(data, pos)
		if !ok {
			return nil
		}
		pos = o.body
		if o.num != want {
			continue
		}
		lx := &contentLexer{b: data, pos: o.body}
		lx.skipSpace()
		if !bytes.HasPrefix(data[lx.pos:], []byte("<<")) {
			return nil
		}
		lx.pos += 2
		d := map[string]cval{}
		for len(d) < 64 {
			lx.skipSpace()
			if lx.pos+1 >= len(data) || data[lx.pos] == '>' {
				break
			}
			k, ok := lx.next()
			if !ok || k.kind != kName {
				break
			}
			v, ok := lx.next()
			if !ok {
				break
			}
			d[k.s] = v
		}
		return d
	}
	return nil
}

// pdfObject is where an object "num gen obj" is: its header and its
// body after the obj keyword.
type pdfObject struct {
	num, gen     int
	header, body int
}

// nextObject finds the next object header from pos.
func nextObject(b []byte, pos int) (pdfObject, bool) {
	for pos < len(b) {
		i := bytes.Index(b[pos:], []byte("obj"))
		if i < 0 {
			return pdfObject{}, false
		}
		kw := pos + i
		pos = kw + 3
		if kw+3 < len(b) && !isPDFSpace(b[kw+3]) && !isPDFDelim(b[kw+3]) {
			continue
		}
		// Back over "num gen ".
		j := kw
		var fields [2]int
		ok := true
		for f := 1; f >= 0 && ok; f-- {
			end := j
			for j > 0 && isPDFSpace(b[j-1]) {
				j--
			}
			if j == end {
				ok = false
				break
			}
			digits := j
			for j > 0 && b[j-1] >= '0' && b[j-1] <= '9' && digits-j < 10 {
				j--
			}
			if j == digits {
				ok = false
				break
			}
			fields[f], _ = strconv.Atoi(string(b[j:digits]))
		}
		if ok && (j == 0 || isPDFSpace(b[j-1]) || isPDFDelim(b[j-1])) {
			return pdfObject{num: fields[0], gen: fields[1], header: j, body: kw + 3}, true
		}
	}
	return pdfObject{}, false
}

// emptyPasswordKey is the file key of the standard security handler's
// RC4 encryption (V 1 or 2, R 2 or 3) with a key under 88 bits, when
// the user password is empty; nil for anything else.
func emptyPasswordKey(d map[string]cval, id string) []byte {
	filter, v, r := d["Filter"], d["V"].num, d["R"].num
	bits := d["Length"].num
	if bits == 0 {
		bits = 40
	}
	o, u, p := d["O"].s, d["U"].s, int64(d["P"].num)
	if filter.s != "Standard" || (v != 1 && v != 2) || (r != 2 && r != 3) ||
		bits < 40 || bits >= 88 || int(bits)%8 != 0 || len(o) != 32 || len(u) != 32 {
		return nil
	}
	n := int(bits) / 8
	if r == 2 {
		n = 5
	}
	h := md5.New()
	h.Write(passwordPad)
	h.Write([]byte(o))
	h.Write([]byte{byte(p), byte(p >> 8), byte(p >> 16), byte(p >> 24)})
	h.Write([]byte(id))
	key := h.Sum(nil)[:n]
	if r == 3 {
		for i := 0; i < 50; i++ {
			sum := md5.Sum(key)
			key = sum[:n]
		}
	}
	// The user password is empty when it reproduces /U.
	var check []byte
	if r == 2 {
		check = bytes.Clone(passwordPad)
		c, _ := rc4.NewCipher(key)
		c.XORKeyStream(check, check)
	} else {
		sum := md5.Sum(append(bytes.Clone(passwordPad), id...))
		check = sum[:]
		for i := 0; i <= 19; i++ {
			k := bytes.Clone(key)
			for j := range k {
				k[j] ^= byte(i)
			}
			c, _ := rc4.NewCipher(k)
			c.XORKeyStream(check, check)
		}
	}
	if !strings.HasPrefix(u, string(check)) {
		return nil
	}
	return key
}

// decryptObjects decrypts, in place, the strings and streams of every
// object but the encryption dictionary and cross-reference streams.
func decryptObjects(b, key []byte, encNum string) {
	ints := intObjects(b)
	pos := 0
	for n := 0; n < maxCryptObjects; n++ {
		o, ok := nextObject(b, pos)
		if !ok {
			return
		}
		num, gen, start := o.num, o.gen, o.body
		end := bytes.Index(b[start:], []byte("endobj"))
		if end < 0 {
			end = len(b)
		} else {
			end += start
		}
		h := md5.New()
		h.Write(key)
		h.Write([]byte{byte(num), byte(num >> 8), byte(num >> 16), byte(gen), byte(gen >> 8)})
		okey := h.Sum(nil)[:len(key)+5]
		skip := strconv.Itoa(num) == encNum
		pos = decryptObject(b, start, end, okey, skip, ints)
	}
}

// decryptObject decrypts the strings and stream of the object between
// start and end (where its endobj is), and returns where it ends. Only
// its stream is skipped over when skip is set.
func decryptObject(b []byte, start, end int, key []byte, skip bool, ints map[string]int) int {
	body := start
	xref := bytes.Contains(b[start:end], []byte("/XRef"))
	if sm := reStreamKw.FindIndex(b[start:end]); sm != nil {
		body = start + sm[0]
		dataStart := start + sm[1]
		length := streamLength(b[start:body], ints)
		if length < 0 || dataStart+length > len(b) {
			length = max(0, end-dataStart)
		}
		if !skip && !xref {
			c, _ := rc4.NewCipher(key)
			c.XORKeyStream(b[dataStart:dataStart+length], b[dataStart:dataStart+length])
		}
		end = dataStart + length
		if e := bytes.Index(b[end:], []byte("endobj")); e >= 0 {
			end += e
		}
	} else {
		body = end
	}
	if !skip && !xref {
		decryptStrings(b, start, body, key)
	}
	return min(end+len("endobj"), len(b))
}

var (
	reLength = regexp.MustCompile(`/Length\s+(\d+)(\s+(\d+)\s+R)?`)
)

// streamLength is a stream's /Length, direct or an indirect reference
// to one of ints (the file's objects that are a number), or -1.
func streamLength(dict []byte, ints map[string]int) int {
	m := reLength.FindSubmatch(dict)
	if m == nil {
		return -1
	}
	if m[2] == nil {
		n, err := strconv.Atoi(string(m[1]))
		if err != nil {
			return -1
		}
		return n
	}
	if n, ok := ints[string(m[1])+" "+string(m[3])]; ok {
		return n
	}
	return -1
}

// intObjects finds the objects that are a number, by "num gen".
func intObjects(b []byte) map[string]int {
	ints := map[string]int{}
	for pos, n := 0, 0; n < maxCryptObjects; n++ {
		o, ok := nextObject(b, pos)
		if !ok {
			break
		}
		pos = o.body
		lx := &contentLexer{b: b, pos: o.body}
		v, ok := lx.next()
		if !ok || v.kind != kNum {
			continue
		}
		if e, ok := lx.next(); ok && e.kind == kOp && e.s == "endobj" {
			ints[strconv.Itoa(o.num)+" "+strconv.Itoa(o.gen)] = int(v.num)
		}
	}
	return ints
}

// decryptStrings decrypts the literal and hex strings between start
// and end in place. A hex string keeps its digits' places; a literal
// one is rewritten within its span, padded after it with spaces, or
// emptied in the rare case it no longer fits.
func decryptStrings(b []byte, start, end int, key []byte) {
	for i := start; i < end; i++ {
		switch {
		case b[i] == '<' && i+1 < end && b[i+1] == '<':
			i++
		case b[i] == '<':
			var digits []int
			j := i + 1
			for ; j < end && b[j] != '>'; j++ {
				if unhex(b[j]) >= 0 {
					digits = append(digits, j)
				}
			}
			raw := make([]byte, len(digits)/2)
			for k := range raw {
				raw[k] = byte(unhex(b[digits[2*k]])<<4 | unhex(b[digits[2*k+1]]))
			}
			c, _ := rc4.NewCipher(key)
			c.XORKeyStream(raw, raw)
			const hexDigits = "0123456789ABCDEF"
			for k, v := range raw {
				b[digits[2*k]], b[digits[2*k+1]] = hexDigits[v>>4], hexDigits[v&15]
			}
			i = j
		case b[i] == '(':
			lx := &contentLexer{b: b[:end], pos: i}
			raw := []byte(lx.literal())
			c, _ := rc4.NewCipher(key)
			c.XORKeyStream(raw, raw)
			esc := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`, "\r", `\r`).Replace(string(raw))
			span := lx.pos - i
			if len(esc)+2 > span {
				esc = ""
			}
			copy(b[i:], "("+esc+")"+strings.Repeat(" ", span-len(esc)-2))
			i = lx.pos - 1
		case b[i] == '%':
			for i < end && b[i] != '\n' && b[i] != '\r' {
				i++
			}
		}
	}
}

func unhexString(s string) string {
	lx := &contentLexer{b: []byte("<" + s + ">")}
	return lx.hex()
}
