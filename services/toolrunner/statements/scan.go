package statements

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/gif"  // statements sent as GIF
	_ "image/jpeg" // and as JPEG (photos, most scanners)
	_ "image/png"
	"io"
	"strconv"
)

// A scanned page is cleaned before tesseract reads it: made black on
// white at the threshold that best splits ink from paper (Otsu's), and
// rid of specks too small to be any part of a letter. Banks shade their
// table headings with a dot screen; tesseract reads text on it as noise
// ("Paid in" came back as "fLfaidin"), and so does scanner grit.

// grayPage is an 8-bit greyscale image, row by row.
type grayPage struct {
	w, h int
	pix  []uint8
}

// maxScanPixels bounds a page's size: an A4 page at 600 dpi is 35
// million pixels.
const maxScanPixels = 40_000_000

// decodeScan reads an image file (PNG, JPEG, GIF, or a PGM/PPM as
// pdftoppm writes) as grey. ok is false for a format it cannot decode
// (TIFF), which tesseract is then given as it is.
func decodeScan(data []byte) (*grayPage, bool, error) {
	if bytes.HasPrefix(data, []byte("P5")) || bytes.HasPrefix(data, []byte("P6")) {
		g, err := readPNM(data)
		return g, err == nil, err
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, false, nil
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxScanPixels {
		return nil, false, unreadable("an image of %d×%d pixels, larger than any statement page", cfg.Width, cfg.Height)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, false, unreadable("a damaged image: %v", err)
	}
	b := img.Bounds()
	g := &grayPage{w: b.Dx(), h: b.Dy(), pix: make([]uint8, b.Dx()*b.Dy())}
	switch im := img.(type) {
	case *image.Gray:
		for y := 0; y < g.h; y++ {
			copy(g.pix[y*g.w:(y+1)*g.w], im.Pix[y*im.Stride:])
		}
		return g, true, nil
	case *image.YCbCr: // JPEG: its luma is the grey
		for y := 0; y < g.h; y++ {
			copy(g.pix[y*g.w:(y+1)*g.w], im.Y[y*im.YStride:])
		}
		return g, true, nil
	case *image.RGBA, *image.NRGBA: // PNG in colour (alpha is ignored)
		var pix []uint8
		var stride int
		if c, ok := im.(*image.RGBA); ok {
			pix, stride = c.Pix, c.Stride
		} else {
			c := im.(*image.NRGBA)
			pix, stride = c.Pix, c.Stride
		}
		for y := 0; y < g.h; y++ {
			row := pix[y*stride:]
			for x := 0; x < g.w; x++ {
				p := row[4*x:]
				g.pix[y*g.w+x] = uint8((299*int(p[0]) + 587*int(p[1]) + 114*int(p[2])) / 1000)
			}
		}
		return g, true, nil
	}
	for y := 0; y < g.h; y++ {
		for x := 0; x < g.w; x++ {
			g.pix[y*g.w+x] = color.GrayModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y
		}
	}
	return g, true, nil
}

// readPNM reads a binary PGM (P5) or PPM (P6) of 8-bit samples.
func readPNM(data []byte) (*grayPage, error) {
	r := bufio.NewReader(bytes.NewReader(data))
	field := func() (string, error) {
		var tok []byte
		for {
			c, err := r.ReadByte()
			if err != nil {
				return "", err
			}
			switch {
			case c == '#' && len(tok) == 0:
				if _, err := r.ReadString('\n'); err != nil {
					return "", err
				}
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				if len(tok) > 0 {
					return string(tok), nil
				}
			default:
				tok = append(tok, c)
			}
		}
	}
	var f [4]string
	for i := range f {
		s, err := field()
		if err != nil {
			return nil, unreadable("a damaged page image")
		}
		f[i] = s
	}
	w, err1 := strconv.Atoi(f[1])
	h, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || f[3] != "255" || w <= 0 || h <= 0 || w*h > maxScanPixels {
		return nil, unreadable("a page image of a size or depth we cannot read")
	}
	ch := 1
	if f[0] == "P6" {
		ch = 3
	}
	raw := make([]byte, w*h*ch)
	if _, err := io.ReadFull(r, raw); err != nil {
		return nil, unreadable("a truncated page image")
	}
	g := &grayPage{w: w, h: h, pix: raw}
	if ch == 3 {
		g.pix = make([]uint8, w*h)
		for i := range g.pix {
			p := raw[3*i:]
			g.pix[i] = uint8((299*int(p[0]) + 587*int(p[1]) + 114*int(p[2])) / 1000)
		}
	}
	return g, nil
}

// otsu is the threshold that best splits the page's pixels in two.
func (g *grayPage) otsu() uint8 {
	var hist [256]int
	for _, p := range g.pix {
		hist[p]++
	}
	total := len(g.pix)
	sum := 0.0
	for i, n := range hist {
		sum += float64(i * n)
	}
	var sumB, best float64
	wB, th := 0, 128
	for t := 0; t < 256; t++ {
		wB += hist[t]
		if wB == 0 {
			continue
		}
		wF := total - wB
		if wF == 0 {
			break
		}
		sumB += float64(t * hist[t])
		mB, mF := sumB/float64(wB), (sum-sumB)/float64(wF)
		if between := float64(wB) * float64(wF) * (mB - mF) * (mB - mF); between > best {
			best, th = between, t
		}
	}
	return uint8(th)
}

// clean makes the page black on white and drops what cannot be print:
// specks of a few pixels wherever they are (a shading's dot screen), and
// larger ones of dust that stand alone, with no ink near them (a decimal
// point stands beside its digits). res is the page's resolution in dpi.
func (g *grayPage) clean(res float64) {
	scale := res * res / (300 * 300)
	tiny := max(2, int(6*scale))      // a screen's dot
	small := max(tiny, int(40*scale)) // a speck of dust
	cell := max(4, int(res/25))       // the grid that tells what is near
	th := g.otsu()
	// 0 paper, 1 ink not yet seen, 2 ink kept.
	gw, gh := (g.w+cell-1)/cell, (g.h+cell-1)/cell
	near := make([]int32, gw*gh) // ink in each cell of the grid
	for i, p := range g.pix {
		if p <= th {
			g.pix[i] = 1
			near[(i/g.w)/cell*gw+(i%g.w)/cell]++
		} else {
			g.pix[i] = 0
		}
	}
	var stack, comp []int32
	for i := range g.pix {
		if g.pix[i] != 1 {
			continue
		}
		comp = comp[:0]
		stack = append(stack[:0], int32(i))
		g.pix[i] = 2
		x0, y0, x1, y1 := g.w, g.h, 0, 0
		for len(stack) > 0 {
			p := int(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			if len(comp) <= small {
				comp = append(comp, int32(p))
			}
			x, y := p%g.w, p/g.w
			x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := x+dx, y+dy
					if nx < 0 || ny < 0 || nx >= g.w || ny >= g.h {
						continue
					}
					if q := ny*g.w + nx; g.pix[q] == 1 {
						g.pix[q] = 2
						stack = append(stack, int32(q))
					}
				}
			}
		}
		if len(comp) > small {
			continue
		}
		if len(comp) > tiny {
			// Dust only when no other ink is within two cells.
			other := -int32(len(comp))
			for cy := max(0, y0/cell-2); cy <= min(gh-1, y1/cell+2); cy++ {
				for cx := max(0, x0/cell-2); cx <= min(gw-1, x1/cell+2); cx++ {
					other += near[cy*gw+cx]
				}
			}
			if other > 0 {
				continue
			}
		}
		for _, p := range comp {
			g.pix[p] = 3 // paper
		}
	}
	for i, p := range g.pix {
		if p == 2 {
			g.pix[i] = 0
		} else {
			g.pix[i] = 255
		}
	}
}

// pgm writes the page as a binary PGM, which tesseract reads from stdin.
func (g *grayPage) pgm() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "P5\n%d %d\n255\n", g.w, g.h)
	b.Grow(len(g.pix))
	b.Write(g.pix)
	return b.Bytes()
}
