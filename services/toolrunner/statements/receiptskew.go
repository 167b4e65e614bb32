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

// skewAngle is the slope of the page's lines in degrees (positive: they
// fall to the right), or 0 when none stands out.
func (g *grayPage) skewAngle() float64 {
	long := max(g.w, g.h)
	if long < 100 {
		return 0
	}
	small := g
	if long > skewSide {
		small = g.scale(float64(skewSide) / float64(long))
	}
	bw := &grayPage{w: small.w, h: small.h, pix: append([]uint8(nil), small.pix...)}
	bw.sauvola(max(small.w, small.h)/30, 0.2)
	// The ink's points, evenly thinned when there are many.
	var xs, ys []float64
	n := 0
	for _, p := range bw.pix {
		if p == 0 {
			n++
		}
	}
	if n < 200 {
		return 0
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
	diag := int(math.Hypot(float64(bw.w), float64(bw.h))) + 2
	hist := make([]int32, diag)
	score := func(deg float64) float64 {
		s, c := math.Sincos(deg * math.Pi / 180)
		clear(hist)
		off := float64(diag) / 2
		for i := range xs {
			b := int(ys[i]*c - xs[i]*s + off)
			if b >= 0 && b < diag {
				hist[b]++
			}
		}
		// The sum of squares is largest when the ink is gathered into
		// the fewest rows.
		var sum float64
		for _, v := range hist {
			sum += float64(v) * float64(v)
		}
		return sum
	}
	best, bestScore := 0.0, score(0)
	flat := bestScore
	for d := -skewMaxDeg; d <= skewMaxDeg+1e-9; d += 0.5 {
		if sc := score(d); sc > bestScore {
			best, bestScore = d, sc
		}
	}
	coarse := best
	for d := coarse - 0.4; d <= coarse+0.4+1e-9; d += 0.1 {
		if sc := score(d); sc > bestScore {
			best, bestScore = d, sc
		}
	}
	// A slope that gathers the ink barely better than none is the noise
	// of a crumpled page or a textured table, not lines.
	if math.Abs(best) < skewMinDeg || bestScore < flat*1.03 || math.Abs(best) >= skewMaxDeg {
		return 0
	}
	return best
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
