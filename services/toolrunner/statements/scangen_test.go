package statements

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"testing"
)

// scanOf makes a scanned copy of a PDF: each page rendered at dpi by
// pdftoppm, greyed and given scanner noise (a paper tone, grain, specks
// of dust), and put back into a PDF as an image only, with no text
// layer. seed makes the noise the same on every run.
func scanOf(t testing.TB, pdf []byte, dpi int, seed uint64) []byte {
	t.Helper()
	_, pages, err := pdfLines(pdf)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	var imgs []*grayPage
	for p := 1; p <= pages; p++ {
		g := renderGray(t, pdf, p, dpi)
		addNoise(g, rng)
		imgs = append(imgs, g)
	}
	return imagePDF(t, imgs, dpi)
}

// renderGray renders page p of a PDF at dpi.
func renderGray(t testing.TB, pdf []byte, p, dpi int) *grayPage {
	t.Helper()
	cmd := exec.Command("pdftoppm", "-r", strconv.Itoa(dpi), "-gray", "-f", strconv.Itoa(p), "-l", strconv.Itoa(p), "-")
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftoppm page %d: %v", p, err)
	}
	g, err := readPNM(out)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// addNoise makes a clean render look scanned: paper at about 92% white
// with grain, ink not quite black, and dust specks.
func addNoise(g *grayPage, rng *rand.Rand) {
	x := rng.Uint64() | 1 // xorshift: a pixel's grain need not be rand's
	for i, p := range g.pix {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		v := 30 + int(p)*205/255 + int(x%25) - 12
		g.pix[i] = uint8(min(255, max(0, v)))
	}
	for range g.w * g.h / 4000 {
		x, y := rng.IntN(g.w-2), rng.IntN(g.h-2)
		for dy := range 1 + rng.IntN(2) {
			for dx := range 1 + rng.IntN(2) {
				g.pix[(y+dy)*g.w+x+dx] = uint8(rng.IntN(60))
			}
		}
	}
}

// imagePDF writes pages as a PDF of greyscale images, one a page.
func imagePDF(t testing.TB, pages []*grayPage, dpi int) []byte {
	t.Helper()
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", ""}
	var kids []string
	for _, g := range pages {
		var z bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
		zw.Write(g.pix)
		zw.Close()
		wpt, hpt := float64(g.w)*72/float64(dpi), float64(g.h)*72/float64(dpi)
		img := len(objs) + 1
		objs = append(objs, fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n%s\nendstream",
			g.w, g.h, z.Len(), z.String()))
		content := fmt.Sprintf("q %.2f 0 0 %.2f 0 0 cm /Im0 Do Q", wpt, hpt)
		objs = append(objs, fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
		objs = append(objs, fmt.Sprintf("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %.2f %.2f] /Resources << /XObject << /Im0 %d 0 R >> >> /Contents %d 0 R >>",
			wpt, hpt, img, img+1))
		kids = append(kids, fmt.Sprintf("%d 0 R", len(objs)))
	}
	objs[1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", joinRefs(kids), len(pages))
	return assemblePDF(objs)
}

func joinRefs(refs []string) string {
	var b bytes.Buffer
	for i, r := range refs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r)
	}
	return b.String()
}

// photoOf is page 1 of a PDF as a PNG or JPEG image, as a phone or a
// scanner to e-mail sends it.
func photoOf(t testing.TB, pdf []byte, dpi int, format string, seed uint64) []byte {
	t.Helper()
	g := renderGray(t, pdf, 1, dpi)
	addNoise(g, rand.New(rand.NewPCG(seed, 2)))
	img := &image.Gray{Pix: g.pix, Stride: g.w, Rect: image.Rect(0, 0, g.w, g.h)}
	var b bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 80})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&b, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
