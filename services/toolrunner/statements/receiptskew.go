package statements

import "math"

// A receipt photographed by hand is seldom square to the camera: its
// lines slope by a few degrees, and tesseract, reading the page as one
// block of lines, runs neighbouring lines into each other ("TOTAL" beside
// the amount of the line above). The slope is measured the way a reader
// would see it: turned by the right angle, the page's ink falls into
// sharp rows with white between them, so the rows' profile (the ink per
// row) is at its most uneven. The page is then turned back by that angle.

const (
	skewMaxDeg  = 10.0 // a photo sloped more than this is retaken, not read
	skewSide    = 800  // the long side of the copy the slope is measured on
	skewMinDeg  = 0.4  // less than this, tesseract reads as well as it is
	skewMaxInks = 150_000
)

// inkPoints are the dark points of a coarse, thresholded copy of the
// page, evenly thinned, measured from its centre; nil when it holds too
// little ink to measure.
func (g *grayPage) inkPoints() (xs, ys []float64, diag int) {
	long := max(g.w, g.h)
	if long < 100 {
		return nil, nil, 0
	}
	small := g
	if long > skewSide {
		small = g.scale(float64(skewSide) / float64(long))
	}
	bw := &grayPage{w: small.w, h: small.h, pix: append([]uint8(nil), small.pix...)}
	bw.sauvola(max(small.w, small.h)/30, 0.2)
	n := 0
	for _, p := range bw.pix {
		if p == 0 {
			n++
		}
	}
	if n < 200 {
		return nil, nil, 0
	}
	step := max(1, n/skewMaxInks)
	k := 0
	cx, cy := float64(bw.w)/2, float64(bw.h)/2
	for i, p := range bw.pix {
		if p != 0 {
			continue
		}
		if k++; k%step != 0 {
			continue
		}
		xs = append(xs, float64(i%bw.w)-cx)
		ys = append(ys, float64(i/bw.w)-cy)
	}
	return xs, ys, int(math.Hypot(float64(bw.w), float64(bw.h))) + 2
}

// rowProfile counts the points in each row of the page turned by deg.
type rowProfile struct {
	xs, ys []float64
	hist   []int32
}

// sharpness is how unevenly the points fall into rows at slope deg: the
// sum of squares of the rows' counts, largest when the ink is gathered
// into the fewest rows.
func (p *rowProfile) sharpness(deg float64) float64 {
	s, c := math.Sincos(deg * math.Pi / 180)
	clear(p.hist)
	off := float64(len(p.hist)) / 2
	for i := range p.xs {
		b := int(p.ys[i]*c - p.xs[i]*s + off)
		if b >= 0 && b < len(p.hist) {
			p.hist[b]++
		}
	}
	var sum float64
	for _, v := range p.hist {
		sum += float64(v) * float64(v)
	}
	return sum
}

// contrast is how much the rows' counts swing from one row to the next
// against their local mean, for the slope deg: lines of print with white
// between them swing fully; columns of print (a till's item and price
// columns, a receipt's edges) change slowly across the page and barely
// swing. It is measured on the profile's own scale, not the page's.
func (p *rowProfile) contrast(deg float64) float64 {
	p.sharpness(deg)
	const r = 6 // rows either side: about a line's pitch at skewSide
	var sum, swing float64
	var run int64
	prefix := make([]int64, len(p.hist)+1)
	for i, v := range p.hist {
		run += int64(v)
		prefix[i+1] = run
	}
	for i, v := range p.hist {
		lo, hi := max(0, i-r), min(len(p.hist), i+r+1)
		mean := float64(prefix[hi]-prefix[lo]) / float64(hi-lo)
		d := float64(v) - mean
		swing += d * d
		sum += float64(v) * float64(v)
	}
	if sum == 0 {
		return 0
	}
	return swing / sum
}

// best is the slope within skewMaxDeg at which the rows are sharpest,
// and its sharpness.
func (p *rowProfile) best() (float64, float64) {
	best, bestScore := 0.0, p.sharpness(0)
	for d := -skewMaxDeg; d <= skewMaxDeg+1e-9; d += 0.5 {
		if sc := p.sharpness(d); sc > bestScore {
			best, bestScore = d, sc
		}
	}
	coarse := best
	for d := coarse - 0.4; d <= coarse+0.4+1e-9; d += 0.1 {
		if sc := p.sharpness(d); sc > bestScore {
			best, bestScore = d, sc
		}
	}
	return best, bestScore
}

// skewAngle is the slope of the page's lines in degrees (positive: they
// fall to the right), or 0 when none stands out.
func (g *grayPage) skewAngle() float64 {
	xs, ys, diag := g.inkPoints()
	if xs == nil {
		return 0
	}
	p := &rowProfile{xs: xs, ys: ys, hist: make([]int32, diag)}
	flat := p.sharpness(0)
	best, bestScore := p.best()
	// A slope that gathers the ink barely better than none is the noise
	// of a crumpled page or a textured table, not lines.
	if math.Abs(best) < skewMinDeg || bestScore < flat*1.03 || math.Abs(best) >= skewMaxDeg {
		return 0
	}
	return best
}

// sideways: the page's ink falls into columns more sharply than into
// rows, so its lines run up or down the page and it lies on its side.
// (Which side up is not told: tesseract's orientation pass is asked
// first, and this is for when it cannot say.)
func (g *grayPage) sideways() bool {
	xs, ys, diag := g.inkPoints()
	if xs == nil {
		return false
	}
	rows := &rowProfile{xs: xs, ys: ys, hist: make([]int32, diag)}
	cols := &rowProfile{xs: ys, ys: xs, hist: make([]int32, diag)}
	r, _ := rows.best()
	c, _ := cols.best()
	// A photo on a grained table blurs both profiles: a quarter more
	// is enough, as this only decides whether a page that read badly
	// as it lies is read on its sides too, and the best reading is kept.
	return cols.contrast(c) > 1.25*rows.contrast(r)
}

// rotateDeg turns the page by deg degrees against the slope skewAngle
// measured, on a canvas large enough to keep its corners, filling what
// lies outside with white.
func (g *grayPage) rotateDeg(deg float64) *grayPage {
	if deg == 0 {
		return g
	}
	s, c := math.Sincos(deg * math.Pi / 180)
	as, ac := math.Abs(s), math.Abs(c)
	w := int(float64(g.w)*ac + float64(g.h)*as + 0.5)
	h := int(float64(g.w)*as + float64(g.h)*ac + 0.5)
	out := &grayPage{w: w, h: h, pix: make([]uint8, w*h)}
	scx, scy := float64(g.w)/2, float64(g.h)/2
	dcx, dcy := float64(w)/2, float64(h)/2
	for y := 0; y < h; y++ {
		dy := float64(y) + 0.5 - dcy
		for x := 0; x < w; x++ {
			dx := float64(x) + 0.5 - dcx
			// Where this pixel was before the page was turned.
			sx := dx*c - dy*s + scx - 0.5
			sy := dx*s + dy*c + scy - 0.5
			x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
			if x0 < 0 || y0 < 0 || x0+1 >= g.w || y0+1 >= g.h {
				out.pix[y*w+x] = 255
				continue
			}
			fx, fy := sx-float64(x0), sy-float64(y0)
			i := y0*g.w + x0
			top := float64(g.pix[i])*(1-fx) + float64(g.pix[i+1])*fx
			bot := float64(g.pix[i+g.w])*(1-fx) + float64(g.pix[i+g.w+1])*fx
			out.pix[y*w+x] = uint8(top*(1-fy) + bot*fy + 0.5)
		}
	}
	return out
}
