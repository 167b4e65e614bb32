package statements

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Scanned statements (images, and PDFs without a text layer) are read
// with OCR: each page is rendered (pdftoppm, from poppler-utils), cleaned
// (scan.go), and read by the tesseract program, whose words with their
// positions make the same lines a PDF's text layer does, and the same
// table reconstruction reads them. Without tesseract the import fails
// with what to install.

func isImage(data []byte) bool {
	return bytes.HasPrefix(data, []byte("\x89PNG")) || bytes.HasPrefix(data, []byte("\xff\xd8\xff")) ||
		bytes.HasPrefix(data, []byte("II*\x00")) || bytes.HasPrefix(data, []byte("MM\x00*")) ||
		bytes.HasPrefix(data, []byte("GIF87a")) || bytes.HasPrefix(data, []byte("GIF89a"))
}

// ocrMissing is what a person reads when a scan needs OCR and the
// machine has no tesseract.
const ocrMissing = "a scanned statement (an image without text): reading it needs OCR, and the tesseract program is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)"

// ocrTimeout bounds one page's rendering and its OCR, each; the
// sandbox's limits bound the whole.
const ocrTimeout = 2 * time.Minute

// ocrDPI is the resolution scanned PDF pages are rendered at: tesseract
// reads best when capital letters are 20 to 40 pixels high.
const ocrDPI = 300

// ocrMaxPages bounds the pages of a scan read.
const ocrMaxPages = 50

// ocrEnv is tesseract's environment: one thread, as the OpenMP threads it
// starts by default spin and take three times the time on a small
// machine.
func ocrEnv() []string { return append(os.Environ(), "OMP_THREAD_LIMIT=1") }

func parseImage(_ string, data []byte, opts Options) (Result, error) {
	lines, err := ocrPage(data, 1, 0)
	if err != nil {
		return Result{}, err
	}
	return ocrTable(lines, opts)
}

// ocrPDF renders each page with pdftoppm and reads it with tesseract.
func ocrPDF(data []byte, pages int, opts Options) (Result, error) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		return Result{}, unreadable(ocrMissing)
	}
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		return Result{}, unreadable("a scanned PDF (no text layer): reading it needs its pages as images, and pdftoppm is not installed (apt-get install poppler-utils)")
	}
	if pages > ocrMaxPages {
		return Result{}, unreadable("a scanned PDF of %d pages; OCR reads at most %d", pages, ocrMaxPages)
	}
	// Pages are read side by side, a tesseract for each processor.
	perPage := make([][]pdfLine, pages)
	errs := make([]error, pages)
	sem := make(chan struct{}, min(max(runtime.NumCPU(), 1), 4))
	var wg sync.WaitGroup
	for p := 1; p <= pages; p++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			img, err := renderPage(data, p)
			if err == nil {
				perPage[p-1], err = ocrPage(img, p, ocrDPI)
			}
			if err != nil && !strings.Contains(err.Error(), ocrNoText) {
				errs[p-1] = err
			}
		}()
	}
	wg.Wait()
	var lines []pdfLine
	for i := range perPage {
		if errs[i] != nil {
			return Result{}, errs[i]
		}
		lines = append(lines, perPage[i]...)
	}
	if len(lines) == 0 {
		return Result{}, unreadable("a scanned PDF in which OCR found no text")
	}
	return ocrTable(lines, opts)
}

// renderPage is page p of a PDF as a greyscale PGM.
func renderPage(data []byte, p int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ocrTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "pdftoppm", "-r", strconv.Itoa(ocrDPI), "-gray", "-f", strconv.Itoa(p), "-l", strconv.Itoa(p), "-")
	cmd.Stdin = bytes.NewReader(data)
	img, err := cmd.Output()
	if err != nil || len(img) == 0 {
		return nil, unreadable("a scanned PDF whose page %d could not be rendered", p)
	}
	return img, nil
}

const ocrNoText = "OCR found no text"

// ocrPage cleans one page's image and returns tesseract's words as
// lines. dpi is the image's resolution where it is known, else 0.
func ocrPage(image []byte, page, dpi int) ([]pdfLine, error) {
	if _, err := exec.LookPath("tesseract"); err != nil {
		return nil, unreadable(ocrMissing)
	}
	g, ok, err := decodeScan(image)
	if err != nil {
		return nil, err
	}
	if ok {
		// An A4 page is 8.27 inches wide where the resolution is not
		// known.
		res := float64(dpi)
		if res == 0 {
			res = float64(g.w) / 8.27
		}
		g.clean(res)
		image = g.pgm()
	}
	lines, err := tesseractLines(image, page, dpi, "", "6")
	if err != nil {
		return nil, err
	}
	if len(lines) == 0 {
		return nil, unreadable(ocrNoText)
	}
	return lines, nil
}

// tesseractLines runs tesseract on one page image, in langs (its default
// when empty) with page segmentation mode psm, and returns its words as
// lines. It is the one place purser runs tesseract: bounded by
// ocrTimeout, one thread.
func tesseractLines(img []byte, page, dpi int, langs, psm string) ([]pdfLine, error) {
	args := []string{"stdin", "stdout", "--psm", psm}
	if langs != "" {
		args = append(args, "-l", langs)
	}
	if dpi > 0 {
		args = append(args, "--dpi", strconv.Itoa(dpi))
	}
	ctx, cancel := context.WithTimeout(context.Background(), ocrTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tesseract", append(args, "tsv")...)
	cmd.Stdin = bytes.NewReader(img)
	cmd.Env = ocrEnv()
	out, err := cmd.Output()
	switch {
	case ctx.Err() != nil:
		return nil, unreadable("OCR took more than %s to read page %d", ocrTimeout, page)
	case err != nil:
		return nil, unreadable("OCR could not read page %d", page)
	}
	runs, err := tesseractRuns(out)
	if err != nil {
		return nil, err
	}
	return groupLines(page, runs), nil
}

// tesseractRuns reads tesseract's TSV: a word per row with its box, the
// top measured down the page (so y is its negation). Each word takes its
// text line's bottom and height, so that words with and without
// descenders stay on one line. The TSV is split by hand: a word may hold
// a quote mark, which a CSV reader would take for a quoted field.
func tesseractRuns(tsv []byte) ([]textRun, error) {
	var runs []textRun
	var lineBottom, lineHeight float64
	for _, row := range bytes.Split(tsv, []byte("\n")) {
		rec := strings.Split(strings.TrimRight(string(row), "\r"), "\t")
		if len(rec) < 12 || (rec[0] != "4" && rec[0] != "5") {
			continue // level 4 is a line, 5 a word
		}
		var box [4]float64
		for i := range box {
			box[i], _ = strconv.ParseFloat(rec[6+i], 64)
		}
		left, top, w, h := box[0], box[1], box[2], box[3]
		if rec[0] == "4" {
			lineBottom, lineHeight = top+h, h
			continue
		}
		conf, _ := strconv.ParseFloat(rec[10], 64)
		text := strings.TrimSpace(strings.Join(rec[11:], " "))
		if text == "" || conf < 0 || strings.Trim(text, ".,:;'\"`_~-—–|°©®™‘’“”*^<>=") == "" {
			continue // no word, or a mark of dust or grain
		}
		bottom, height := lineBottom, lineHeight
		if top+h < bottom-lineHeight || top > bottom || height <= 0 {
			bottom, height = top+h, h // a word outside its line's box
		}
		// A line's box is about four fifths of the font's size, which
		// the table reconstruction measures gaps by.
		runs = append(runs, textRun{x0: left, x1: left + w, y: -bottom, size: height * ocrSizePerHeight, s: text})
		if len(runs) > maxRuns {
			return nil, unreadable("%s", fmt.Sprintf("more than %d words", maxRuns))
		}
	}
	return runs, nil
}

const ocrSizePerHeight = 1.25

// ocrTable rebuilds the table from OCR's lines.
func ocrTable(lines []pdfLine, opts Options) (Result, error) {
	return tableFromLines(lines, "ocr", opts)
}
