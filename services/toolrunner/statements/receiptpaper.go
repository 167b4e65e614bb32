package statements

// A phone photo of a receipt shows what it lies on: a wooden table, a
// leather wallet, a hand. Textured background turns, once thresholded,
// into thousands of specks that tesseract tries to read as letters, which
// costs minutes and buries the receipt's lines in noise. The receipt is
// the largest bright region of the photo; everything outside it is
// painted white before OCR.

// paperSide is the longer side of the coarse copy the paper is found on.
const paperSide = 400

// paper paints white what lies outside the receipt's paper and crops
// the page to it. A page that is all paper (a scan, a cropped photo), or
// whose paper cannot be told from its background, is returned as it is.
func (g *grayPage) paper() *grayPage {
	long := max(g.w, g.h)
	if long < 200 {
		return g
	}
	f := float64(paperSide) / float64(long)
	small := g.scale(min(f, 1))
	f = float64(small.w) / float64(g.w)
	// Paper is what is brighter than Otsu's threshold, grown into
	// what is brighter than halfway down to the background's mean: a
	// receipt lit unevenly dims towards one end.
	high := small.otsu()
	var bgSum, bgN int
	for _, p := range small.pix {
		if p <= high {
			bgSum += int(p)
			bgN++
		}
	}
	if bgN == 0 || bgN == len(small.pix) {
		return g
	}
	// Only a dark background (a wallet, a dark table) is told from the
	// paper with confidence; a grey one is as bright as the paper's
	// shadowed end, which painting out would lose.
	bg, paper := bgSum/bgN, 0
	for _, p := range small.pix {
		if p > high {
			paper += int(p)
		}
	}
	paper /= len(small.pix) - bgN
	if bg*2 > paper {
		return g
	}
	th := uint8((int(high) + bg) / 2)
	w, h := small.w, small.h
	// The largest 4-connected region of bright pixels.
	label := make([]int32, w*h)
	best, bestN := int32(0), 0
	var next int32
	stack := make([]int, 0, 1024)
	for i, p := range small.pix {
		if p <= high || label[i] != 0 {
			continue
		}
		next++
		n := 0
		stack = append(stack[:0], i)
		label[i] = next
		for len(stack) > 0 {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n++
			x := j % w
			for _, k := range [4]int{j - 1, j + 1, j - w, j + w} {
				switch {
				case k < 0 || k >= len(label):
					continue
				case k == j-1 && x == 0, k == j+1 && x == w-1:
					continue
				case label[k] != 0 || small.pix[k] <= th:
					continue
				}
				label[k] = next
				stack = append(stack, k)
			}
		}
		if n > bestN {
			best, bestN = next, n
		}
	}
	// Paper that fills (nearly) the whole page needs nothing done; a
	// region too small to be the receipt says the light misled the
	// threshold.
	if bestN < w*h/10 || bestN > w*h*9/10 {
		return g
	}
	// Each row's span of paper, so that the letters (dark holes in the
	// bright region) are kept.
	left, right := make([]int, h), make([]int, h)
	top, bottom, x0, x1 := h, -1, w, -1
	for y := 0; y < h; y++ {
		left[y], right[y] = -1, -1
		for x := 0; x < w; x++ {
			if label[y*w+x] == best {
				if left[y] < 0 {
					left[y] = x
				}
				right[y] = x
			}
		}
		// A row with only a sliver of paper is the region's ragged
		// edge or a finger's shine.
		if left[y] >= 0 && right[y]-left[y] < w/20 {
			left[y], right[y] = -1, -1
		}
		if left[y] >= 0 {
			top, bottom = min(top, y), max(bottom, y)
			x0, x1 = min(x0, left[y]), max(x1, right[y])
		}
	}
	if bottom < 0 {
		return g
	}
	// Above and below the region the paper may go on in shadow (a
	// receipt's ends dim away from the light): those rows keep the
	// region's full width rather than being painted out.
	for y := 0; y < h; y++ {
		if y < top || y > bottom {
			left[y], right[y] = x0, x1
		}
	}
	// Back to the page's pixels, a coarse pixel's margin around.
	cx0, cy0 := max(0, int(float64(x0-1)/f)), 0
	cx1, cy1 := min(g.w, int(float64(x1+2)/f)), g.h
	out := &grayPage{w: cx1 - cx0, h: cy1 - cy0}
	out.pix = make([]uint8, out.w*out.h)
	for y := 0; y < out.h; y++ {
		sy := min(h-1, int(float64(y+cy0)*f))
		l, r := -1, -1
		for d := -1; d <= 1; d++ { // the rows beside, for a slanted edge
			if yy := sy + d; yy >= 0 && yy < h && left[yy] >= 0 {
				if l < 0 || left[yy] < l {
					l = left[yy]
				}
				r = max(r, right[yy])
			}
		}
		row := g.pix[(y+cy0)*g.w+cx0 : (y+cy0)*g.w+cx1]
		dst := out.pix[y*out.w : (y+1)*out.w]
		for x := range dst {
			sx := int(float64(x+cx0) * f)
			if l < 0 || sx < l-1 || sx > r+1 {
				dst[x] = 255
			} else {
				dst[x] = row[x]
			}
		}
	}
	return out
}
