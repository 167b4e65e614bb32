package statements

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Scanned statements (images, and PDFs without a text layer) are read
// with OCR: the tesseract program's words with their positions make the
// same lines a PDF's text layer does, and the same table reconstruction
// reads them. Without tesseract the import fails with what to install.

func isImage(data []byte) bool {
	return bytes.HasPrefix(data, []byte("\x89PNG")) || bytes.HasPrefix(data, []byte("\xff\xd8\xff")) ||
		bytes.HasPrefix(data, []byte("II*\x00")) || bytes.HasPrefix(data, []byte("MM\x00*"))
}

// ocrMissing is what a person reads when a scan needs OCR and the
// machine has no tesseract.
const ocrMissing = "a scanned statement (an image without text): reading it needs OCR, and the tesseract program is not installed (apt-get install tesseract-ocr)"

// ocrTimeout bounds one page's OCR; the sandbox's limits bound the rest.
const ocrTimeout = 60 * time.Second

func parseImage(_ string, data []byte, opts Options) (Result, error) {
	lines, err := ocrLines(data, 1)
	if err != nil {
		return Result{}, err
	}
	return tableFromLines(lines, "ocr", opts)
}

// ocrPDF renders each page with pdftoppm (poppler-utils) and reads it
// with tesseract.
func ocrPDF(data []byte, pages int, opts Options) (Result, error) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		return Result{}, unreadable(ocrMissing)
	}
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		return Result{}, unreadable("a scanned PDF (no text layer): reading it needs its pages as images, and pdftoppm is not installed (apt-get install poppler-utils)")
	}
	var lines []pdfLine
	for p := 1; p <= min(pages, 50); p++ {
		ctx, cancel := context.WithTimeout(context.Background(), ocrTimeout)
		cmd := exec.CommandContext(ctx, "pdftoppm", "-r", "300", "-gray", "-png", "-f", strconv.Itoa(p), "-l", strconv.Itoa(p), "-")
		cmd.Stdin = bytes.NewReader(data)
		png, err := cmd.Output()
		cancel()
		if err != nil {
			return Result{}, unreadable("a scanned PDF whose page %d could not be rendered", p)
		}
		l, err := ocrLines(png, p)
		if err != nil {
			return Result{}, err
		}
		lines = append(lines, l...)
	}
	return tableFromLines(lines, "ocr", opts)
}

// ocrLines runs tesseract on one image and returns its words as lines.
func ocrLines(image []byte, page int) ([]pdfLine, error) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		return nil, unreadable(ocrMissing)
	}
	ctx, cancel := context.WithTimeout(context.Background(), ocrTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tesseract", "stdin", "stdout", "--psm", "6", "tsv")
	cmd.Stdin = bytes.NewReader(image)
	out, err := cmd.Output()
	if err != nil {
		return nil, unreadable("OCR could not read the image: %v", err)
	}
	runs, err := tesseractRuns(out)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, unreadable("OCR found no text in the image")
	}
	return groupLines(page, runs), nil
}

// tesseractRuns reads tesseract's TSV: a word per row with its box, the
// top measured down the page (so y is its negation).
func tesseractRuns(tsv []byte) ([]textRun, error) {
	r := csv.NewReader(bytes.NewReader(tsv))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	r.ReuseRecord = true
	var runs []textRun
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, unreadable("OCR output: %v", err)
		}
		if len(rec) < 12 || rec[0] != "5" {
			continue // only level-5 rows are words
		}
		nums := make([]float64, 4)
		for i := range nums {
			nums[i], _ = strconv.ParseFloat(rec[6+i], 64)
		}
		conf, _ := strconv.ParseFloat(rec[10], 64)
		text := strings.TrimSpace(rec[11])
		if text == "" || conf < 0 {
			continue
		}
		left, top, w, h := nums[0], nums[1], nums[2], nums[3]
		runs = append(runs, textRun{x0: left, x1: left + w, y: -(top + h), size: h, s: text})
		if len(runs) > maxRuns {
			return nil, unreadable("%s", fmt.Sprintf("more than %d words", maxRuns))
		}
	}
	return runs, nil
}
