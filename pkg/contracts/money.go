package contracts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"
)

// Amount is a money amount in major units as the model or a client wrote
// it ("12.50", "200", "0.005"). It decodes from a JSON string or a JSON
// number, keeping the literal's digits exactly (a number never passes
// through float64), and encodes as a JSON string. Decoding accepts any
// string or number; the "amount" validation then refuses what is not
// exact: exponents, signs, separators, symbols, too many digits. How many
// decimals are allowed depends on the currency, which Minor checks.
type Amount string

// UnmarshalJSON takes a JSON string or the literal text of a JSON number.
// null leaves the Amount as it is (absent).
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		return nil
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = Amount(strings.TrimSpace(s))
		return nil
	case b[0] == '-' || (b[0] >= '0' && b[0] <= '9'):
		*a = Amount(b)
		return nil
	}
	kind := map[byte]string{'t': "bool", 'f': "bool", '{': "object", '[': "array"}[b[0]]
	return &json.UnmarshalTypeError{Value: kind, Type: reflect.TypeFor[Amount]()}
}

// MarshalJSON writes the amount as a JSON string, its one canonical form.
func (a Amount) MarshalJSON() ([]byte, error) { return json.Marshal(string(a)) }

// maxWholeDigits bounds the major units of an amount: up to
// 999,999,999,999, far above any expense and far below int64 overflow even
// with four decimals.
const maxWholeDigits = 12

// Problem says what is wrong with the amount as written, in words fit for a
// validation error (and so for the model's one corrective retry), or ""
// when it is a positive decimal of at most maxWholeDigits digits and
// maxMinorDigits decimals. It never quotes the amount.
func (a Amount) Problem() string {
	s := string(a)
	switch {
	case s == "":
		return "is required"
	case strings.ContainsAny(s, "eE"):
		return "must be written out in digits, without an exponent, e.g. 12.50"
	case strings.HasPrefix(s, "-"):
		return "must be more than zero: a negative amount is not an expense"
	case strings.HasPrefix(s, "+"):
		return "must be digits only, without a sign, e.g. 12.50"
	case strings.Contains(s, ","):
		return "is ambiguous: use '.' for decimals and no thousands separators, e.g. 1234.50"
	case strings.Count(s, ".") > 1:
		return "is ambiguous: use one '.' for decimals and no thousands separators, e.g. 1234.50"
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" || (hasDot && frac == "") || !allDigits(whole) || !allDigits(frac) {
		return "must be a decimal number in digits, without a currency symbol or words, e.g. 12.50"
	}
	if len(strings.TrimLeft(whole, "0")) > maxWholeDigits {
		return fmt.Sprintf("is out of range (at most %d digits before the decimal point)", maxWholeDigits)
	}
	if len(frac) > maxMinorDigits {
		return fmt.Sprintf("has too many decimals (no currency has more than %d)", maxMinorDigits)
	}
	if strings.Trim(whole+frac, "0") == "" {
		return "must be more than zero"
	}
	return ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Minor converts the amount to integer minor units of currency: "12.5" GBP
// is 1250, "1200" JPY is 1200, "1.250" KWD is 1250. It refuses what Problem
// refuses, an unknown currency, and more decimals than the currency has
// ("12.5" JPY); the error says which.
func (a Amount) Minor(currency string) (int64, error) {
	if p := a.Problem(); p != "" {
		return 0, &ValidationError{Field: "amount", Problem: p}
	}
	digits, ok := MinorUnits(currency)
	if !ok {
		return 0, &ValidationError{Field: "currency", Problem: "must be an ISO 4217 code such as GBP"}
	}
	return minorOf(string(a), digits, currency)
}

func minorOf(s string, digits int, currency string) (int64, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if trimmed := strings.TrimRight(frac, "0"); len(trimmed) > digits {
		p := fmt.Sprintf("has more decimals than %s allows (%d)", currency, digits)
		if digits == 0 {
			p = fmt.Sprintf("must be a whole number: %s has no minor unit", currency)
		}
		return 0, &ValidationError{Field: "amount", Problem: p}
	} else {
		frac = trimmed
	}
	frac += strings.Repeat("0", digits-len(frac))
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, &ValidationError{Field: "amount", Problem: "is out of range"}
	}
	n := w
	for range digits {
		n *= 10
	}
	if frac != "" {
		f, _ := strconv.ParseInt(frac, 10, 64)
		n += f
	}
	return n, nil
}

// FormatDecimal writes minor units with two decimals: 1250 becomes "12.50".
//
// Deprecated: use FormatMinor with the currency.
func FormatDecimal(minor int64) string { return formatMinor(minor, 2) }

// FormatMinor is the inverse of Amount.Minor: 1250 GBP is "12.50", 1200 JPY
// is "1200", 1250 KWD is "1.250". An unknown currency gets two decimals.
func FormatMinor(minor int64, currency string) string {
	digits, ok := MinorUnits(currency)
	if !ok {
		digits = 2
	}
	return formatMinor(minor, digits)
}

func formatMinor(minor int64, digits int) string {
	sign := ""
	u := uint64(minor)
	if minor < 0 {
		sign, u = "-", uint64(-minor)
	}
	s := strconv.FormatUint(u, 10)
	if digits == 0 {
		return sign + s
	}
	if len(s) <= digits {
		s = strings.Repeat("0", digits-len(s)+1) + s
	}
	return sign + s[:len(s)-digits] + "." + s[len(s)-digits:]
}

// JSONSchema tells the model an amount may be a number or a string.
func (Amount) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{{Type: "number"}, {Type: "string"}}}
}
