package statements

import (
	"math/big"
	"os/exec"
	"strings"
)

// A receipt (a till slip photographed or scanned, an e-mailed eBon or a
// web shop's invoice) is one purchase: who was paid, when, how much and
// in what currency. It is read from its lines of text, wherever they came
// from (a PDF's text layer, or OCR), by what the lines say: the total is
// the amount beside a total keyword in any of the languages below, not a
// subtotal, tax, savings or payment line; the payment lines (given, card,
// change, cash-back) confirm it or, when the total line cannot be read,
// stand in for it. Whatever was not read with confidence is said in
// Unsure rather than guessed.

// Receipt is what was read off one receipt.
type Receipt struct {
	// Merchant is the shop's name as printed, brand first.
	Merchant string `json:"merchant"`
	// Date is the purchase date, YYYY-MM-DD; "" when none was found.
	Date string `json:"date"`
	// Total is what the customer paid in major units with a '.' and the
	// decimals printed ("17.47", "2516.28", "1280"); "" when none was found.
	Total      string `json:"total"`
	TotalMinor int64  `json:"total_minor"`
	// Currency is an ISO 4217 code, or "" when none is printed or known.
	Currency string `json:"currency"`
	// Items are the line items as printed, best effort.
	Items []ReceiptItem `json:"items,omitempty"`
	// ReadBy is "text" (a PDF's text layer) or "OCR".
	ReadBy string `json:"read_by"`
	// Unsure lists what the person should check, in plain words.
	Unsure []string `json:"unsure,omitempty"`
}

// ReceiptItem is one line item: its text and its amount as printed.
type ReceiptItem struct {
	Text   string `json:"text"`
	Amount string `json:"amount"`
}

// ReceiptOptions are what is known of the person.
type ReceiptOptions struct {
	// Currency is the person's default currency, used when a receipt
	// prints none and its language does not settle it.
	Currency string `json:"currency,omitempty"`
	// DateOrder is the person's day/month order (dmy, mdy, ymd or ""),
	// used for dates such as 03/04/2025 that could be either.
	DateOrder string `json:"date_order,omitempty"`
}

// receiptMaxPages bounds the pages of a PDF read as a receipt by OCR: a
// receipt is a page or two (an eBon runs to a second page of coupons).
const receiptMaxPages = 3

// ReadReceipt reads one receipt: a photo or scan (PNG, JPEG, GIF, TIFF),
// or a PDF, with a text layer or scanned. The format is told by the
// content; the name is not used.
func ReadReceipt(name string, data []byte, opts ReceiptOptions) (Receipt, error) {
	lines, readBy, err := receiptSource(data)
	if err != nil {
		return Receipt{}, err
	}
	r := readReceiptLines(lines, readBy, opts)
	if r.empty() {
		return Receipt{}, unreadable("no receipt found: no total, date or priced line could be read")
	}
	return r, nil
}

// receiptSource is a receipt file's lines, from its text layer or by OCR,
// and which of the two it was.
func receiptSource(data []byte) ([]pdfLine, string, error) {
	switch {
	case isPDF(data):
		lines, pages, err := pdfLines(data)
		if err != nil {
			return nil, "", err
		}
		if hasText(lines) {
			return lines, "text", nil
		}
		lines, err = ocrRendered(data, pages)
		return lines, "OCR", err
	case isImage(data):
		lines, err := receiptOCR(data, 1, 0)
		return lines, "OCR", err
	}
	return nil, "", unreadable("a receipt must be a photo, a scan or a PDF")
}

// hasText: a PDF's text layer holds words and figures; a scan's holds
// nothing, or a line of its scanner's name.
func hasText(lines []pdfLine) bool {
	chars, figures := 0, 0
	for _, l := range lines {
		t := l.text()
		chars += len(t)
		for _, c := range t {
			if c >= '0' && c <= '9' {
				figures++
			}
		}
	}
	return chars >= 20 && figures >= 3
}

// ocrRendered renders the first pages of a PDF without a usable text
// layer and reads them by OCR.
func ocrRendered(data []byte, pages int) ([]pdfLine, error) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		return nil, unreadable("a scanned PDF (no text layer): reading it needs its pages as images, and pdftoppm is not installed (apt-get install poppler-utils)")
	}
	var lines []pdfLine
	for p := 1; p <= min(pages, receiptMaxPages); p++ {
		img, err := renderPage(data, p)
		if err != nil {
			return nil, err
		}
		l, err := receiptOCR(img, p, ocrDPI)
		if err != nil && !strings.Contains(err.Error(), ocrNoText) {
			return nil, err
		}
		lines = append(lines, l...)
	}
	if len(lines) == 0 {
		return nil, unreadable("a scanned PDF in which OCR found no text")
	}
	return lines, nil
}

func (r Receipt) empty() bool {
	return r.Total == "" && r.Date == "" && len(r.Items) == 0
}

// textLines makes lines of plain text (one a line, a form feed starting
// a page) into the positioned lines the reader takes, for text already
// read and for tests.
func textLines(text string) []pdfLine {
	var out []pdfLine
	page, y := 1, 1000.0
	for _, s := range strings.Split(text, "\n") {
		for strings.HasPrefix(s, "\f") {
			page, y, s = page+1, 1000, s[1:]
		}
		y -= 12
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		out = append(out, pdfLine{page: page, y: y, size: 10, cells: []pdfCell{{x0: 0, x1: float64(len(s)) * 5, s: s}}})
	}
	return out
}

// readReceiptLines reads a receipt from its lines in reading order.
func readReceiptLines(lines []pdfLine, readBy string, opts ReceiptOptions) Receipt {
	rd := newReceiptReader(lines, opts)
	r := Receipt{ReadBy: readBy}
	r.Merchant = rd.merchant()
	ccy, ccyNote := rd.currency()
	tot := rd.total(ccy)
	if tot.ccy != "" {
		ccy, ccyNote = tot.ccy, ""
	}
	r.Currency = ccy
	if tot.ok {
		r.Total = formatTotal(tot.val, tot.decimals)
		if m, _, ok := toMinor(tot.val, ccy); ok {
			r.TotalMinor = m
		} else {
			r.Total = ""
			tot.notes = append(tot.notes, "the total is too large to be a receipt's; check it")
		}
	}
	r.Date = rd.date(ccy, &r.Unsure)
	r.Unsure = append(r.Unsure, tot.notes...)
	if ccyNote != "" && (r.Total != "" || len(rd.lines) > 0) {
		r.Unsure = append(r.Unsure, ccyNote)
	}
	r.Items = rd.items(tot.line)
	if r.Merchant == "" {
		r.Unsure = append(r.Unsure, "no shop name found")
	}
	return r
}

// formatTotal writes v with its printed decimals and a '.'.
func formatTotal(v *big.Rat, decimals int) string {
	return v.FloatString(decimals)
}

// receiptReader holds a receipt's lines as read.
type receiptReader struct {
	lines []rline
	opts  ReceiptOptions
	lang  string // en de fr es nl ja, or ""
}

// rline is one line: its text, the text folded for matching (lower case,
// without accents), and the amounts in it.
type rline struct {
	page    int
	size    float64 // its letters' height (OCR) or font size
	text    string
	fold    string
	words   []string
	amounts []ramount
}

func newReceiptReader(lines []pdfLine, opts ReceiptOptions) *receiptReader {
	rd := &receiptReader{opts: opts}
	for _, l := range lines {
		t := normaliseReceiptText(l.text())
		if t == "" {
			continue
		}
		f := foldText(t)
		rd.lines = append(rd.lines, rline{page: l.page, size: l.size, text: t, fold: f, words: foldWords(f), amounts: findAmounts(t)})
		if len(rd.lines) >= maxReceiptLines {
			break
		}
	}
	rd.lang = receiptLanguage(rd.lines)
	return rd
}

// maxReceiptLines bounds the lines read: a receipt a metre long has
// a few hundred.
const maxReceiptLines = 2000
