// Package statements reads bank statements as banks send them: CSV/TSV
// exports in any delimiter and encoding, OFX/QFX, ISO 20022 camt.053,
// SWIFT MT940, QIF, and PDF statements with a text layer (scanned ones
// through OCR when tesseract is installed), into transactions in the
// integer minor units of their ISO 4217 currency. Columns and values are
// decided from the whole file. Files are untrusted: Sandbox runs the
// parsers in a child process that loses network and file access and has
// CPU, memory, time and size limits.
package statements

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/purser-ai/purser/internal/wording"
)

// Txn is one parsed transaction. AmountMinor is from the account holder's
// side (negative is money out) in the minor units of Currency.
type Txn struct {
	Date         string `json:"date"` // YYYY-MM-DD
	AmountMinor  int64  `json:"amount_minor"`
	Currency     string `json:"currency"`
	Description  string `json:"description"`
	Vendor       string `json:"vendor,omitempty"`
	Category     string `json:"category"`
	FITID        string `json:"fitid,omitempty"`
	Account      string `json:"account,omitempty"`
	NeedsReview  bool   `json:"needs_review,omitempty"`
	ReviewReason string `json:"review_reason,omitempty"`
}

// Result is what a file held.
type Result struct {
	Format       string   `json:"format"` // csv | ofx | camt053 | mt940 | qif | pdf | ocr
	Layout       string   `json:"layout"` // how the file was understood
	Transactions []Txn    `json:"transactions"`
	Warnings     []string `json:"warnings,omitempty"`
	// DateOrder is the reading taken ("day/month" or "month/day") when
	// nothing in the file settled it; empty when the file did.
	DateOrder string `json:"date_order,omitempty"`
	// CurrencyFrom says where the currency came from: "file", "inferred"
	// (from what the file says without naming it: an IBAN, the headers'
	// language), "default" (the caller's) or "unknown".
	CurrencyFrom string `json:"currency_from,omitempty"`
	// Rounded counts amounts written more precisely than their
	// currency's minor unit, rounded half to even.
	Rounded int `json:"rounded,omitempty"`
	// Uncertain lists what a person should check, in words.
	Uncertain []string `json:"uncertain,omitempty"`
}

// Options are what the caller knows of the account and the user.
type Options struct {
	// DefaultCurrency is the account's or the user's currency, used when
	// the file names none. Empty: such files get no currency and say so.
	DefaultCurrency string `json:"default_currency,omitempty"`
	// DateOrder is the user's day/month order ("dmy", "mdy" or a locale
	// such as "en-US"), used when nothing in a file settles it.
	DateOrder string `json:"date_order,omitempty"`
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
	opts.DefaultCurrency = strings.ToUpper(strings.TrimSpace(opts.DefaultCurrency))
	if opts.DefaultCurrency != "" && !isCurrency(opts.DefaultCurrency) {
		opts.DefaultCurrency = ""
	}
	var r Result
	var err error
	switch {
	case isPDF(data):
		r, err = parsePDF(data, opts)
	case isImage(data):
		r, err = parseImage(name, data, opts)
	default:
		text := decodeText(data)
		switch {
		case looksLikeOFX(text):
			r, err = parseOFX(data, text, opts)
		case looksLikeCamt(text):
			r, err = parseCamt(text, opts)
		case looksLikeMT940(text):
			r, err = parseMT940(text, opts)
		case looksLikeQIF(text):
			r, err = parseQIF(text, opts)
		default:
			r, err = parseCSV(text, opts)
		}
	}
	if err != nil {
		return Result{}, err
	}
	return finished(r)
}

// finished is r made final (finish), or why a file with no transactions
// is not a statement.
func finished(r Result) (Result, error) {
	if len(r.Transactions) == 0 {
		return Result{}, unreadable("no transactions found")
	}
	finish(&r)
	return r, nil
}

// decodeText reads text in whatever encoding it came: UTF-8 with or
// without a byte-order mark, UTF-16 (by its mark, or by the zero bytes of
// ASCII text without one), else Windows-1252 (a superset of Latin-1's
// printable characters, which is what such files mostly are).
func decodeText(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
		b = b[3:]
	case bytes.HasPrefix(b, []byte("\xff\xfe")):
		return decodeUTF16(b[2:], false)
	case bytes.HasPrefix(b, []byte("\xfe\xff")):
		return decodeUTF16(b[2:], true)
	case len(b) >= 4 && len(b)%2 == 0:
		// ASCII text in UTF-16 has a zero in every other byte.
		n := min(len(b), 512) &^ 1
		evenZero, oddZero := 0, 0
		for i := 0; i < n; i += 2 {
			if b[i] == 0 {
				evenZero++
			}
			if b[i+1] == 0 {
				oddZero++
			}
		}
		if oddZero > n/4 && evenZero == 0 {
			return decodeUTF16(b, false)
		}
		if evenZero > n/4 && oddZero == 0 {
			return decodeUTF16(b, true)
		}
	}
	if utf8.Valid(b) {
		return string(b)
	}
	out, err := charmap.Windows1252.NewDecoder().Bytes(b)
	if err != nil {
		var sb strings.Builder
		for _, c := range b {
			sb.WriteRune(rune(c))
		}
		return sb.String()
	}
	return string(out)
}

func decodeUTF16(b []byte, bigEndian bool) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		if bigEndian {
			u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
		} else {
			u[i] = uint16(b[2*i+1])<<8 | uint16(b[2*i])
		}
	}
	return string(utf16.Decode(u))
}

// isPDF: the file starts with a PDF header (after any blank bytes).
func isPDF(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimLeft(data[:min(len(data), 1024)], " \t\r\n\x00"), []byte("%PDF"))
}

func looksLikeOFX(text string) bool {
	head := strings.ToUpper(text[:min(len(text), 4096)])
	return strings.Contains(head, "<OFX>") || strings.Contains(head, "OFXHEADER")
}

// rawTxn is a transaction before the file-wide decisions: its date's
// day/month order and its amount's minor units.
type rawTxn struct {
	date    dateCell
	amt     *big.Rat
	ccy     string
	desc    string
	fitid   string
	account string
	review  string
}

// builder collects a file's transactions and makes the decisions that
// need all of them.
type builder struct {
	res     Result
	opts    Options
	txns    []rawTxn
	fileCcy string // the file's own currency, when it names one
	guessed bool   // the layout was guessed
	dollar  bool   // amounts carry a bare "$"
	// inferredCcy is the currency the file points to without naming it
	// (its IBAN, its headers' language), and inferredFrom what it was
	// taken from, in words.
	inferredCcy, inferredFrom string
}

func newBuilder(format, layout string, opts Options) *builder {
	return &builder{res: Result{Format: format, Layout: layout}, opts: opts}
}

func (b *builder) warn(format string, args ...any) {
	b.res.Warnings = append(b.res.Warnings, fmt.Sprintf(format, args...))
}

func (b *builder) add(t rawTxn) error {
	if len(b.txns) >= MaxRows {
		return unreadable("more than %d transactions", MaxRows)
	}
	t.desc = strings.Join(strings.Fields(t.desc), " ")
	b.txns = append(b.txns, t)
	return nil
}

// currency decides the currency of transactions that carry none: the
// file's, then a "$" read with the caller's dollar currency, then what the
// file points to, then the caller's default.
func (b *builder) currency() (ccy, from string) {
	switch {
	case b.fileCcy != "":
		return b.fileCcy, "file"
	case b.dollar && dollarCurrencies[b.opts.DefaultCurrency]:
		return b.opts.DefaultCurrency, "file"
	case b.dollar:
		b.res.Uncertain = append(b.res.Uncertain, "amounts are in dollars of no named country; read as USD")
		return "USD", "file"
	case b.inferredCcy != "":
		note := "currency " + b.inferredCcy + " taken from " + b.inferredFrom
		if d := b.opts.DefaultCurrency; d != "" && d != b.inferredCcy {
			note += ", not your default " + d
		}
		b.res.Uncertain = append(b.res.Uncertain, note)
		return b.inferredCcy, "inferred"
	case b.opts.DefaultCurrency != "":
		b.res.Uncertain = append(b.res.Uncertain, "the file names no currency; read as "+b.opts.DefaultCurrency+", your default")
		return b.opts.DefaultCurrency, "default"
	}
	b.res.Uncertain = append(b.res.Uncertain, "the file names no currency and no default currency is set")
	return "", "unknown"
}

// finish makes the file-wide decisions and returns the result.
func (b *builder) finish() (Result, error) {
	res := b.res
	var open []dateCell
	for _, t := range b.txns {
		if t.date.fixed != ymd {
			open = append(open, t.date)
		}
	}
	order, undecided := orderOf(open, ParseDateOrder(b.opts.DateOrder))
	if order == 0 {
		return Result{}, unreadable("the dates are written in more than one order")
	}
	bySeries := false
	if len(open) > 0 && undecided {
		var all []dateCell
		for _, t := range b.txns {
			all = append(all, t.date)
		}
		if o, why := seriesOrder(all); o != 0 {
			note := "nothing in the file tells day from month; dates read as " + o.String() + ", " + why
			if def := ParseDateOrder(b.opts.DateOrder); def != 0 && def != o {
				note += ", not your default " + def.String()
			}
			order, bySeries = o, true
			res.Uncertain = append(res.Uncertain, note)
		} else {
			src := "your default"
			if ParseDateOrder(b.opts.DateOrder) == 0 {
				src = "a guess"
			}
			res.Uncertain = append(res.Uncertain, fmt.Sprintf("nothing in the file tells day from month; dates read as %s (%s)", order, src))
		}
		res.DateOrder = order.String()
	}
	needCcy := false
	for _, t := range b.txns {
		if t.ccy == "" {
			needCcy = true
		}
	}
	b.res = res
	def, from := "", "file"
	if needCcy {
		def, from = b.currency()
	}
	res = b.res
	res.CurrencyFrom = from
	var example string
	for _, t := range b.txns {
		date, ok := t.date.format(order)
		if !ok {
			res.Warnings = append(res.Warnings, "skipped a transaction with an impossible date")
			continue
		}
		ccy := t.ccy
		if ccy == "" {
			ccy = def
		}
		minor, rounded, ok := toMinor(t.amt, ccy)
		if !ok {
			res.Warnings = append(res.Warnings, "skipped a transaction with an impossible amount")
			continue
		}
		tx := Txn{Date: date, AmountMinor: minor, Currency: ccy, Description: t.desc, FITID: t.fitid, Account: t.account}
		if rounded {
			res.Rounded++
			if example == "" {
				example = t.amt.FloatString(min(12, maxDecimals(t.amt))) + " to " + formatMinor(minor, ccy)
			}
		}
		switch {
		case t.review != "":
			tx.NeedsReview, tx.ReviewReason = true, t.review
		case b.guessed:
			tx.NeedsReview, tx.ReviewReason = true, "the statement's layout was guessed"
		case len(open) > 0 && undecided && !bySeries && ParseDateOrder(b.opts.DateOrder) == 0:
			tx.NeedsReview, tx.ReviewReason = true, "the date's day and month could be either way round"
		case ccy == "":
			tx.NeedsReview, tx.ReviewReason = true, "the file names no currency"
		}
		res.Transactions = append(res.Transactions, tx)
	}
	if res.Rounded > 0 {
		res.Uncertain = append(res.Uncertain, fmt.Sprintf("%d amount%s had more decimals than the currency has and %s rounded half to even (e.g. %s)",
			res.Rounded, wording.Plural(res.Rounded), map[bool]string{true: "was", false: "were"}[res.Rounded == 1], example))
	}
	if len(res.Transactions) == 0 {
		return Result{}, unreadable("no transactions found")
	}
	return res, nil
}

func maxDecimals(r *big.Rat) int {
	d := 0
	den := new(big.Int).Set(r.Denom())
	for den.Cmp(big.NewInt(1)) > 0 && d < 40 {
		den.Quo(den, bigTen)
		d++
	}
	return d
}

func formatMinor(m int64, ccy string) string {
	d := minorUnits(ccy)
	r := new(big.Rat).SetFrac(big.NewInt(m), big.NewInt(pow10i(d)))
	return strings.TrimSpace(r.FloatString(d) + " " + ccy)
}

func pow10i(n int) int64 {
	v := int64(1)
	for range n {
		v *= 10
	}
	return v
}

// Currencies lists the currencies of a result's transactions, sorted.
func (r Result) Currencies() []string {
	seen := map[string]bool{}
	for _, t := range r.Transactions {
		seen[t.Currency] = true
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}
