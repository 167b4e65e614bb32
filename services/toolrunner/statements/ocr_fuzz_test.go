package statements

import (
	"bytes"
	"image"
	"image/png"
	"testing"
)

// OCR's own input parsing, fuzzed without tesseract: the page images it
// decodes and cleans, and the TSV tesseract answers with, made into a
// table.

func FuzzScanImage(f *testing.F) {
	img := image.NewGray(image.Rect(0, 0, 40, 30))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	f.Add(b.Bytes())
	f.Add([]byte("P5\n4 2\n255\n\x00\xff\x00\xff\x10\x20\x30\x40"))
	f.Add([]byte("P6\n1 1\n255\n\x01\x02\x03"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		g, ok, err := decodeScan(data)
		if err != nil || !ok {
			return
		}
		if g.w <= 0 || g.h <= 0 || len(g.pix) != g.w*g.h {
			t.Fatalf("a page of %d×%d with %d pixels", g.w, g.h, len(g.pix))
		}
		if g.w*g.h > 1<<20 {
			return
		}
		g.clean(300)
		for _, p := range g.pix {
			if p != 0 && p != 255 {
				t.Fatalf("cleaned page has grey %d", p)
			}
		}
		if out := g.pgm(); !bytes.HasPrefix(out, []byte("P5\n")) {
			t.Fatalf("pgm %q", out[:min(len(out), 16)])
		}
	})
}

const tsvSeed = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
	"4\t1\t1\t1\t1\t0\t200\t900\t2100\t40\t-1\t\n" +
	"5\t1\t1\t1\t1\t1\t217\t920\t71\t25\t96\tDate\n" +
	"5\t1\t1\t1\t1\t2\t481\t920\t140\t32\t96\tDetails\n" +
	"5\t1\t1\t1\t1\t3\t1453\t918\t160\t27\t75\t£Paid out\n" +
	"5\t1\t1\t1\t1\t4\t2135\t914\t150\t51\t60\tBalance\n" +
	"4\t1\t1\t1\t2\t0\t200\t960\t2100\t40\t-1\t\n" +
	"5\t1\t1\t1\t2\t1\t219\t970\t130\t32\t95\t18 Jul 25\n" +
	"5\t1\t1\t1\t2\t2\t473\t970\t300\t32\t95\tCARD \"SHOP\n" +
	"5\t1\t1\t1\t2\t3\t1549\t970\t73\t25\t90\t28.9O\n" +
	"5\t1\t1\t1\t2\t4\t2209\t970\t87\t25\t90\t694.08\n"

func FuzzOCRTable(f *testing.F) {
	f.Add([]byte(tsvSeed))
	f.Fuzz(func(t *testing.T, tsv []byte) {
		if len(tsv) > 1<<16 {
			return
		}
		runs, err := tesseractRuns(tsv)
		if err != nil || len(runs) == 0 {
			return
		}
		r, err := ocrTable(groupLines(1, runs), Options{DefaultCurrency: "GBP"})
		if err == nil {
			finish(&r)
		}
		checkResult(t, r, err)
	})
}

// The seed reads as one transaction: the OCR'd "28.9O" put right.
func TestOCRTableSeed(t *testing.T) {
	runs, err := tesseractRuns([]byte(tsvSeed))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ocrTable(groupLines(1, runs), Options{DefaultCurrency: "GBP"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Transactions) != 1 || r.Transactions[0].AmountMinor != -2890 || r.Transactions[0].Description != `CARD "SHOP` {
		t.Fatalf("%+v", r.Transactions)
	}
}
