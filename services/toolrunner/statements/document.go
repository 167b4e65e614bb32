package statements

import (
	"strings"
)

// An uploaded file is a bank statement or a receipt, and which one is
// told by what it holds, never by its name: a statement is a table of
// dated amounts (with balances, often), a receipt one purchase with a
// total, its tax and how it was paid. A PDF or image is read once (its
// text layer, or OCR, which takes seconds) and both readings are tried on
// the same lines.

// Document is one uploaded file read as what it is.
type Document struct {
	Kind      string   `json:"kind"` // "statement" or "receipt"
	Statement *Result  `json:"statement,omitempty"`
	Receipt   *Receipt `json:"receipt,omitempty"`
}

// Document kinds.
const (
	KindStatement = "statement"
	KindReceipt   = "receipt"
)

// ReadDocument reads a file as a statement or a receipt, whichever its
// content is.
func ReadDocument(name string, data []byte, opts Options, ropts ReceiptOptions) (Document, error) {
	if !isPDF(data) && !isImage(data) {
		r, err := Parse(name, data, opts)
		if err != nil {
			return Document{}, err
		}
		return Document{Kind: KindStatement, Statement: &r}, nil
	}
	lines, format, err := documentLines(data, opts)
	if err != nil {
		return Document{}, err
	}
	if lines == nil {
		// A long scanned PDF is a statement: receipts are a page or two.
		r, err := Parse(name, data, opts)
		if err != nil {
			return Document{}, err
		}
		return Document{Kind: KindStatement, Statement: &r}, nil
	}
	readBy := "text"
	if format == "ocr" {
		readBy = "OCR"
	}
	stmt, stmtErr := statementFrom(lines, format, opts)
	rcpt := readReceiptLines(lines, readBy, ropts)
	switch kind := documentKind(stmt, stmtErr, rcpt, lines); kind {
	case KindStatement:
		if format == "ocr" {
			// The receipt's OCR (cut to a till roll's width, thresholded
			// for thermal paper) loses rows of a page of columns: a scan
			// of a statement is read again as the mail flow reads it.
			if r, err := Parse(name, data, opts); err == nil && len(r.Transactions) >= len(stmt.Transactions) {
				stmt = r
			}
		}
		return Document{Kind: kind, Statement: &stmt}, nil
	case KindReceipt:
		return Document{Kind: kind, Receipt: &rcpt}, nil
	}
	if stmtErr != nil {
		return Document{}, unreadable("neither a statement nor a receipt: no transactions, and no total or date of a purchase, could be read")
	}
	return Document{}, unreadable("neither a statement nor a receipt")
}

// documentLines is a PDF's or image's lines, read once: the text layer,
// else OCR. nil lines without an error is a scan too long to be a
// receipt, which the statement reader takes page by page.
func documentLines(data []byte, opts Options) ([]pdfLine, string, error) {
	if isImage(data) {
		lines, err := receiptOCR(data, 1, 0)
		return lines, "ocr", err
	}
	lines, pages, err := pdfLines(data)
	if err != nil {
		return nil, "", err
	}
	if hasText(lines) {
		return lines, "pdf", nil
	}
	if pages > receiptMaxPages {
		return nil, "", nil
	}
	lines, err = ocrRendered(data, pages)
	return lines, "ocr", err
}

// statementFrom rebuilds a statement's table from the lines, as Parse
// does for a PDF or a scan.
func statementFrom(lines []pdfLine, format string, opts Options) (Result, error) {
	opts.DefaultCurrency = strings.ToUpper(strings.TrimSpace(opts.DefaultCurrency))
	if opts.DefaultCurrency != "" && !isCurrency(opts.DefaultCurrency) {
		opts.DefaultCurrency = ""
	}
	r, err := tableFromLines(lines, format, opts)
	if err != nil {
		return Result{}, err
	}
	return finished(r)
}

// documentKind weighs the evidence: several transactions on different
// dates make a statement, unless the receipt reading found a purchase's
// total and the table is a receipt's few lines; a total (or a date with
// priced lines) makes a receipt. "" is neither.
func documentKind(stmt Result, stmtErr error, rcpt Receipt, lines []pdfLine) string {
	dates := map[string]bool{}
	for _, t := range stmt.Transactions {
		dates[t.Date] = true
	}
	statementish := stmtErr == nil && len(stmt.Transactions) >= 3 && len(dates) >= 2
	receiptish := rcpt.Total != "" || (rcpt.Date != "" && len(rcpt.Items) > 0)
	balances := 0
	for _, l := range lines {
		if pdfBalanceLine(l.text()) {
			balances++
		}
	}
	switch {
	case statementish && (!receiptish || balances > 0 || len(dates) >= 4):
		return KindStatement
	case receiptish:
		return KindReceipt
	case stmtErr == nil:
		return KindStatement
	}
	return ""
}
