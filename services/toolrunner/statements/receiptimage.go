package statements

import (
	"bytes"
	"context"
	"math"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Receipts come as phone photos more often than as scans: lit unevenly,
// crumpled, and at times turned on their side. Before tesseract reads
// one, the picture is turned upright (tesseract's orientation detection,
// --psm 0, says by how much) and made black on white by a threshold that
// follows the light across the page (Sauvola's, on a window a few lines
// tall) rather than one threshold for all of it, which loses the dim half
// of a photo.

// rotate turns the page clockwise by quarter turns (1, 2 or 3).
func (g *grayPage) rotate(quarters int) *grayPage {
	quarters = ((quarters % 4) + 4) % 4
	if quarters == 0 {
		return g
	}
	w, h := g.w, g.h
	out := &grayPage{w: w, h: h, pix: make([]uint8, len(g.pix))}
	if quarters != 2 {
		out.w, out.h = h, w
	}
	for y := 0; y < h; y++ {
		row := g.pix[y*w : (y+1)*w]
		for x, p := range row {
			var nx, ny int
			switch quarters {
			case 1: // clockwise: the left column becomes the top row
				nx, ny = h-1-y, x
			case 2:
				nx, ny = w-1-x, h-1-y
			case 3:
				nx, ny = y, w-1-x
			}
			out.pix[ny*out.w+nx] = p
		}
	}
	return out
}

// scale resizes the page by f with bilinear sampling.
func (g *grayPage) scale(f float64) *grayPage {
	w, h := max(1, int(float64(g.w)*f)), max(1, int(float64(g.h)*f))
	if w == g.w && h == g.h {
		return g
	}
	out := &grayPage{w: w, h: h, pix: make([]uint8, w*h)}
	for y := 0; y < h; y++ {
		sy := (float64(y)+0.5)/f - 0.5
		y0 := min(max(int(sy), 0), g.h-1)
		y1 := min(y0+1, g.h-1)
		fy := min(max(sy-float64(y0), 0), 1)
		for x := 0; x < w; x++ {
			sx := (float64(x)+0.5)/f - 0.5
			x0 := min(max(int(sx), 0), g.w-1)
			x1 := min(x0+1, g.w-1)
			fx := min(max(sx-float64(x0), 0), 1)
			top := float64(g.pix[y0*g.w+x0])*(1-fx) + float64(g.pix[y0*g.w+x1])*fx
			bot := float64(g.pix[y1*g.w+x0])*(1-fx) + float64(g.pix[y1*g.w+x1])*fx
			out.pix[y*w+x] = uint8(top*(1-fy) + bot*fy + 0.5)
		}
	}
	return out
}

// sauvola makes the page black on white with a threshold for each pixel
// from the mean m and deviation s of the window around it:
// m·(1 + k·(s/128 − 1)). Where the window is flat (paper, or a dark table
// top) the threshold falls below its mean and nothing turns black.
func (g *grayPage) sauvola(window int, k float64) {
	w, h := g.w, g.h
	// Integral images of the values and their squares, one row and
	// column larger.
	sum := make([]int64, (w+1)*(h+1))
	sq := make([]int64, (w+1)*(h+1))
	for y := 0; y < h; y++ {
		var rs, rq int64
		for x := 0; x < w; x++ {
			p := int64(g.pix[y*w+x])
			rs += p
			rq += p * p
			i := (y+1)*(w+1) + x + 1
			sum[i] = sum[i-(w+1)] + rs
			sq[i] = sq[i-(w+1)] + rq
		}
	}
	r := max(window/2, 1)
	out := make([]uint8, len(g.pix))
	for y := 0; y < h; y++ {
		y0, y1 := max(0, y-r), min(h, y+r+1)
		for x := 0; x < w; x++ {
			x0, x1 := max(0, x-r), min(w, x+r+1)
			n := float64((y1 - y0) * (x1 - x0))
			a, b, c, d := y0*(w+1)+x0, y0*(w+1)+x1, y1*(w+1)+x0, y1*(w+1)+x1
			s := float64(sum[d] - sum[b] - sum[c] + sum[a])
			q := float64(sq[d] - sq[b] - sq[c] + sq[a])
			m := s / n
			v := q/n - m*m
			dev := math.Sqrt(max(v, 0))
			th := m * (1 + k*(dev/128-1))
			if float64(g.pix[y*w+x]) <= th {
				out[y*w+x] = 0
			} else {
				out[y*w+x] = 255
			}
		}
	}
	g.pix = out
}

var (
	reOSDRotate = regexp.MustCompile(`(?m)^Rotate:\s*(\d+)`)
	reOSDConf   = regexp.MustCompile(`(?m)^Orientation confidence:\s*([0-9.]+)`)
	reOSDScript = regexp.MustCompile(`(?m)^Script:\s*(\S+)`)
)

// orientation asks tesseract which way up the page is (its --psm 0,
// which needs the osd language data): the clockwise quarter turns that
// set it upright, and the script it saw ("Latin", "Japanese", "Han").
// A page tesseract cannot judge (too little text, no osd data) is taken
// as upright, and sure is false.
func orientation(page []byte) (quarters int, script string, sure bool) {
	ctx, cancel := context.WithTimeout(context.Background(), ocrTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tesseract", "stdin", "stdout", "--psm", "0")
	cmd.Stdin = bytes.NewReader(page)
	cmd.Env = ocrEnv()
	out, err := cmd.Output()
	if err != nil {
		return 0, "", false
	}
	if m := reOSDScript.FindSubmatch(out); m != nil {
		script = string(m[1])
	}
	m := reOSDRotate.FindSubmatch(out)
	c := reOSDConf.FindSubmatch(out)
	if m == nil || c == nil {
		return 0, script, false
	}
	deg, _ := strconv.Atoi(string(m[1]))
	conf, _ := strconv.ParseFloat(string(c[1]), 64)
	// A low confidence is tesseract's guess on a page of few letters.
	if conf < 1.5 {
		return 0, script, false
	}
	return deg / 90, script, true
}

// ocrLanguages are the tesseract languages receipts are read in, of
// those installed: the Latin-script ones together (one pass), Japanese
// on its own, as eng+jpn together reads slowly and mistakes Latin text for
// kana.
var ocrLanguages = sync.OnceValues(func() (latin, japanese string) {
	out, err := exec.Command("tesseract", "--list-langs").Output()
	if err != nil {
		return "eng", ""
	}
	have := map[string]bool{}
	for _, l := range strings.Fields(string(out)) {
		have[l] = true
	}
	var ls []string
	for _, l := range []string{"eng", "deu", "fra", "spa", "nld"} {
		if have[l] {
			ls = append(ls, l)
		}
	}
	if len(ls) == 0 {
		ls = []string{"eng"}
	}
	if have["jpn"] {
		japanese = "jpn"
		if have["eng"] {
			japanese = "jpn+eng"
		}
	}
	return strings.Join(ls, "+"), japanese
})

// receiptLongSide is the length a photo's longer side is scaled to: a
// till receipt photographed whole then has letters about 30 pixels
// high, as tesseract reads best.
const receiptLongSide = 2160

// receiptOCR reads one receipt page. dpi is the resolution of a page
// rendered from a PDF (clean print, read as it is); 0 is a photo or scan
// of unknown resolution, which is turned upright, levelled, scaled and
// thresholded by its local light first.
func receiptOCR(img []byte, page, dpi int) ([]pdfLine, error) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		return nil, unreadable("a photo or scan: reading it needs OCR, and the tesseract program is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)")
	}
	g, ok, err := decodeScan(img)
	if err != nil {
		return nil, err
	}
	if !ok {
		return receiptOCRPrepared(img, nil, page, dpi, "")
	}
	if dpi == 0 {
		g = g.paper()
	}
	long := float64(max(g.w, g.h))
	small := g
	if long > 1200 {
		small = g.scale(1200 / long)
	}
	q, script, sure := orientation(small.pgm())
	// Tesseract cannot always tell which way up a photo is (a Japanese
	// receipt, often). When it could not, and the page read as it lies
	// gives neither a total nor a date, a page whose print seems to run up the page is read
	// on either side too, and the reading that finds most of a receipt
	// is kept.
	turns := []int{q}
	var best []pdfLine
	var bestErr error
	bestScore := -1
	for i := 0; i < len(turns); i++ {
		lines, err := receiptOCRPage(g.rotate(turns[i]), page, dpi, script)
		if err != nil {
			if best == nil && bestErr == nil {
				bestErr = err
			}
		} else if sc := receiptStrength(lines); sc > bestScore {
			best, bestScore, bestErr = lines, sc, nil
		}
		if i == 0 && !sure && bestScore < receiptStrengthDate && small.sideways() {
			turns = append(turns, 1, 3)
		}
		if i > 0 && bestScore >= receiptStrengthTotal+receiptStrengthDate {
			break // a total and a date: this side is up
		}
	}
	return best, bestErr
}

// receiptOCRPage levels, scales and thresholds an upright page and reads
// it.
func receiptOCRPage(g *grayPage, page, dpi int, script string) ([]pdfLine, error) {
	long := float64(max(g.w, g.h))
	skew := g.skewAngle()
	if dpi == 0 {
		g = g.scale(min(max(receiptLongSide/long, 0.25), 3))
	}
	g = g.rotateDeg(skew)
	var head *grayPage // a photo's upper part, before thresholding
	if dpi == 0 {
		t := g.top(0.25)
		head = &grayPage{w: t.w, h: t.h, pix: slices.Clone(t.pix)}
		g.sauvola(receiptLongSide/36, 0.2)
	} else {
		g.clean(float64(dpi))
	}
	return receiptOCRPrepared(g.pgm(), head, page, dpi, script)
}

// receiptOCRPrepared reads a page made ready for tesseract, in the
// languages its script calls for.
func receiptOCRPrepared(img []byte, head *grayPage, page, dpi int, script string) ([]pdfLine, error) {
	latin, japanese := ocrLanguages()
	langs := latin
	if japanese != "" && (script == "Japanese" || script == "Han" || script == "Katakana" || script == "Hiragana") {
		langs = japanese
	}
	lines, err := tesseractLines(img, page, dpi, langs, "6")
	if err != nil {
		return nil, err
	}
	// Nothing a receipt holds was found, or yen but no total: perhaps it
	// is Japanese, which the orientation pass did not see (the Latin
	// models read kanji as strings of capitals and ¥ as ¥ or #).
	if japanese != "" && langs != japanese && (!receiptLike(lines) || yenWithoutTotal(lines)) {
		if jl, err := tesseractLines(img, page, dpi, japanese, "6"); err == nil && receiptLike(jl) && cjkRunes(jl) >= 20 {
			return jl, nil
		}
	}
	if len(lines) == 0 {
		return nil, unreadable(ocrNoText)
	}
	// A shop's name printed large as a logo, or small beneath one, is
	// lost when the page is read as lines of one size; the head is read
	// again as scattered words.
	if head != nil && newReceiptReader(lines, ReceiptOptions{}).merchant() == "" {
		head.sauvola(receiptLongSide/36, 0.2)
		if hl, err := tesseractLines(head.pgm(), page, 0, langs, "11"); err == nil {
			var keep []pdfLine
			for _, l := range hl {
				if len(findAmounts(l.text())) == 0 {
					keep = append(keep, l)
				}
			}
			lines = append(keep, lines...)
		}
	}
	return lines, nil
}

// What a total's line and a date count for in receiptStrength; the
// amounts, fewer than a date's.
const (
	receiptStrengthTotal = 10
	receiptStrengthDate  = 5
)

// receiptStrength is how much of a receipt a reading found: a total's
// line counts most, then a date, then the amounts (together less than a
// date).
func receiptStrength(lines []pdfLine) int {
	rd := newReceiptReader(lines, ReceiptOptions{})
	n, total, date := 0, false, false
	for _, l := range rd.lines {
		if r := l.role(); (r == roleTotal || r == roleTotalWeak) && len(l.amounts) > 0 {
			total = true
		}
		n += len(l.amounts)
		date = date || len(rd.datesIn(l.text)) > 0
	}
	n = min(n, receiptStrengthDate-1)
	if total {
		n += receiptStrengthTotal
	}
	if date {
		n += receiptStrengthDate
	}
	return n
}

// receiptLike: OCR read something a receipt holds, a total or at least
// two amounts.
func receiptLike(lines []pdfLine) bool {
	rd := newReceiptReader(lines, ReceiptOptions{})
	n := 0
	for _, l := range rd.lines {
		if r := l.role(); (r == roleTotal || r == roleTotalWeak) && len(l.amounts) > 0 {
			return true
		}
		n += len(l.amounts)
	}
	return n >= 2
}

// yenWithoutTotal: amounts marked as yen were read, and no total line.
func yenWithoutTotal(lines []pdfLine) bool {
	rd := newReceiptReader(lines, ReceiptOptions{})
	yen := false
	for _, l := range rd.lines {
		if r := l.role(); (r == roleTotal || r == roleTotalWeak) && len(l.amounts) > 0 {
			return false
		}
		for _, a := range l.amounts {
			yen = yen || a.yen
		}
	}
	return yen
}

// cjkRunes counts the Japanese characters read: tesseract's Japanese
// model reads a blurred Latin receipt as stray kana, a few to a line,
// and a real Japanese receipt has dozens.
func cjkRunes(lines []pdfLine) int {
	n := 0
	for _, l := range lines {
		for _, r := range l.text() {
			if isCJK(r) {
				n++
			}
		}
	}
	return n
}

// top is the page's upper part, a fraction f of its height.
func (g *grayPage) top(f float64) *grayPage {
	h := max(1, min(g.h, int(float64(g.h)*f)))
	return &grayPage{w: g.w, h: h, pix: g.pix[:g.w*h]}
}
