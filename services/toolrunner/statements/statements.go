// Package statements reads bank statements: CSV exports of many banks
// (header mapping, known shapes, and a guessing fallback) and OFX/QFX, into
// transactions in integer minor units. Files are untrusted: Sandbox runs
// the parsers in a child process with CPU, memory, time and size limits.
package statements

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Txn is one parsed transaction. AmountMinor is from the account holder's
// side: negative is money out.
type Txn struct {
	Date         string `json:"date"` // YYYY-MM-DD
	AmountMinor  int64  `json:"amount_minor"`
	Currency     string `json:"currency"`
	Description  string `json:"description"`
	Vendor       string `json:"vendor,omitempty"`
	Category     string `json:"category"`
	FITID        string `json:"fitid,omitempty"`
	NeedsReview  bool   `json:"needs_review,omitempty"`
	ReviewReason string `json:"review_reason,omitempty"`
}

// Result is what a file held.
type Result struct {
	Format       string   `json:"format"` // csv | ofx
	Layout       string   `json:"layout"` // how the columns were understood
	Transactions []Txn    `json:"transactions"`
	Warnings     []string `json:"warnings,omitempty"`
}

// Options tune parsing.
type Options struct {
	// DefaultCurrency is used when the file names none. Default GBP.
	DefaultCurrency string
}

// ErrUnreadable is wrapped by every "this is not a statement" error.
var ErrUnreadable = errors.New("not a statement we can read")

func unreadable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnreadable, fmt.Sprintf(format, args...))
}

// MaxRows bounds the transactions read from one file.
const MaxRows = 100_000

// Parse reads a statement, choosing the format by content (the name is
// only a hint).
func Parse(name string, data []byte, opts Options) (Result, error) {
	if opts.DefaultCurrency == "" {
		opts.DefaultCurrency = "GBP"
	}
	text := toUTF8(data)
	var r Result
	var err error
	if looksLikeOFX(text) {
		r, err = parseOFX(data, text, opts)
	} else {
		r, err = parseCSV(text, opts)
	}
	if err != nil {
		return Result{}, err
	}
	if len(r.Transactions) == 0 {
		return Result{}, unreadable("no transactions found")
	}
	finish(&r)
	return r, nil
}

// toUTF8 drops a byte-order mark and reads non-UTF-8 text as ISO-8859-1
// (which the charset headers of the OFX files in the wild mostly say).
func toUTF8(b []byte) string {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for _, c := range b {
		sb.WriteRune(rune(c))
	}
	return sb.String()
}

func looksLikeOFX(text string) bool {
	head := strings.ToUpper(text[:min(len(text), 4096)])
	return strings.Contains(head, "<OFX>") || strings.Contains(head, "OFXHEADER")
}
