package statements

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The fuzz targets check more than "no panic": every result holds only
// well-formed transactions, and it survives a round trip through a plain
// CSV written from it (the same dates, amounts, currencies and
// descriptions come back), so a parser that misreads its own output's
// values is caught. FuzzSandbox checks that the sandboxed child and the
// in-process parser agree.

func checkResult(t *testing.T, r Result, err error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, ErrUnreadable) {
			t.Fatalf("an error that is not a failure to read: %v", err)
		}
		return
	}
	if len(r.Transactions) == 0 {
		t.Fatal("success without transactions")
	}
	for _, tx := range r.Transactions {
		if _, ok := splitDate(tx.Date); !ok || len(tx.Date) != 10 {
			t.Fatalf("bad date %q", tx.Date)
		}
		if tx.Currency != "" && !isCurrency(tx.Currency) {
			t.Fatalf("bad currency %q", tx.Currency)
		}
		if tx.AmountMinor > maxMinor || tx.AmountMinor < -maxMinor {
			t.Fatalf("amount out of range %d", tx.AmountMinor)
		}
	}
	roundTrip(t, r)
}

// roundTrip writes r as "Date,Description,Amount,Currency" and reads it
// back.
func roundTrip(t *testing.T, r Result) {
	t.Helper()
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write([]string{"Date", "Description", "Amount", "Currency"})
	for _, tx := range r.Transactions {
		if tx.Currency == "" || strings.TrimSpace(tx.Description) == "" || balanceRow.MatchString(tx.Description) {
			return // not representable in the plain form
		}
		if _, ok := splitDate(tx.Description); ok {
			return
		}
		if _, err := readAmount(tx.Description, sepAuto); err == nil {
			return
		}
		_ = w.Write([]string{tx.Date, tx.Description, decimalOf(tx.AmountMinor, tx.Currency), tx.Currency})
	}
	w.Flush()
	back, err := Parse("roundtrip.csv", []byte(b.String()), Options{})
	if err != nil {
		t.Fatalf("its own plain CSV is unreadable: %v\n%s", err, b.String())
	}
	type key struct {
		date, ccy, desc string
		amt             int64
	}
	var want, got []key
	for _, tx := range r.Transactions {
		want = append(want, key{tx.Date, tx.Currency, tx.Description, tx.AmountMinor})
	}
	for _, tx := range back.Transactions {
		got = append(got, key{tx.Date, tx.Currency, tx.Description, tx.AmountMinor})
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("round trip\n got %v\nwant %v\n%s", got, want, b.String())
	}
}

func decimalOf(minor int64, ccy string) string {
	d := minorUnits(ccy)
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	if d == 0 {
		return fmt.Sprintf("%s%d", sign, minor)
	}
	p := pow10i(d)
	return fmt.Sprintf("%s%d.%0*d", sign, minor/p, d, minor%p)
}

func FuzzParseCamt(f *testing.F) {
	addSeeds(f, ".xml")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseCamt(decodeText(data), Options{DefaultCurrency: "EUR"})
		if err == nil {
			finish(&r)
		}
		checkResult(t, r, err)
	})
}

func FuzzParseMT940(f *testing.F) {
	addSeeds(f, ".sta")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseMT940(decodeText(data), Options{DefaultCurrency: "EUR"})
		if err == nil {
			finish(&r)
		}
		checkResult(t, r, err)
	})
}

func FuzzParseQIF(f *testing.F) {
	addSeeds(f, ".qif")
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseQIF(decodeText(data), Options{DefaultCurrency: "GBP", DateOrder: "dmy"})
		if err == nil {
			finish(&r)
		}
		checkResult(t, r, err)
	})
}

func FuzzParsePDF(f *testing.F) {
	addSeeds(f, ".pdf")
	f.Add(makePDF(3, 30))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		r, err := Parse("fuzz.pdf", data, Options{DefaultCurrency: "GBP"})
		checkResult(t, r, err)
	})
}

// FuzzSandbox: whatever the file, the sandboxed child's answer is the
// in-process parser's.
func FuzzSandbox(f *testing.F) {
	addSeeds(f, ".csv", ".ofx", ".qif", ".sta", ".xml")
	s := sandbox("")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		want, werr := Parse("fuzz", data, s.Options)
		got, gerr := s.Parse(context.Background(), "fuzz", data)
		if werr != nil {
			var fl *Failure
			if !errors.As(gerr, &fl) || fl.Reason != werr.Error() {
				t.Fatalf("in process: %v; sandbox: %v", werr, gerr)
			}
			return
		}
		if gerr != nil || !reflect.DeepEqual(normal(got), normal(want)) {
			t.Fatalf("sandbox %+v (%v)\nin process %+v", got, gerr, want)
		}
	})
}

// normal makes empty and nil slices alike, as JSON does.
func normal(r Result) Result {
	if len(r.Warnings) == 0 {
		r.Warnings = nil
	}
	if len(r.Uncertain) == 0 {
		r.Uncertain = nil
	}
	return r
}
