package contracts

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestAmountDecodesNumbersAndStringsExactly(t *testing.T) {
	tests := []struct {
		give    string // the JSON value of "amount"
		want    Amount
		wantErr string
	}{
		{`"12.50"`, "12.50", ""},
		{`12.50`, "12.50", ""}, // the literal, trailing zero kept: never a float64
		{`200`, "200", ""},
		{`" 7.5 "`, "7.5", ""},
		{`0.1`, "0.1", ""},
		{`999999999999.9999`, "999999999999.9999", ""},
		{`9007199254740993`, "", "out of range"}, // above 2^53: a float64 would have changed it silently
		{`"1234567890123"`, "", "out of range"},
		{`1e308`, "", "without an exponent"},
		{`1E2`, "", "without an exponent"},
		{`"1e3"`, "", "without an exponent"},
		{`-5`, "", "more than zero"},
		{`"-5.00"`, "", "more than zero"},
		{`"+5"`, "", "without a sign"},
		{`0`, "", "more than zero"},
		{`"0.000"`, "", "more than zero"},
		{`"1,234.50"`, "", "ambiguous"},
		{`"12,5"`, "", "ambiguous"},
		{`"1.234.50"`, "", "ambiguous"},
		{`"£12"`, "", "without a currency symbol"},
		{`"12 pounds"`, "", "without a currency symbol"},
		{`"12."`, "", "decimal number in digits"},
		{`".5"`, "", "decimal number in digits"},
		{`"1.23456"`, "", "too many decimals"},
		{`""`, "", "is required"},
		{`[1]`, "", "must be a number or a string"},
		{`{"value":1}`, "", "must be a number or a string"},
	}
	for _, tt := range tests {
		t.Run(tt.give, func(t *testing.T) {
			var a AddExpenseArgs
			err := Decode([]byte(`{"item":"lunch","amount":`+tt.give+`}`), &a)
			if tt.wantErr == "" {
				if err != nil || a.Amount != tt.want {
					t.Fatalf("got %q, %v; want %q", a.Amount, err, tt.want)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), "amount: ") || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want amount: …%s…", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), strings.Trim(tt.give, `"`)) && len(strings.Trim(tt.give, `"`)) > 3 {
				t.Errorf("error %q quotes the value", err)
			}
		})
	}
}

func TestAmountMinorFollowsTheCurrency(t *testing.T) {
	tests := []struct {
		give     Amount
		currency string
		want     int64
		wantErr  string
	}{
		{"12.5", "GBP", 1250, ""},
		{"12.50", "EUR", 1250, ""},
		{"200", "USD", 20000, ""},
		{"0.05", "GBP", 5, ""},
		{"1200", "JPY", 1200, ""},
		{"1200.00", "JPY", 1200, ""}, // trailing zeros say nothing more
		{"12.5", "JPY", 0, "must be a whole number: JPY has no minor unit"},
		{"1.250", "KWD", 1250, ""},
		{"1.25", "KWD", 1250, ""},
		{"1.2345", "KWD", 0, "more decimals than KWD allows (3)"},
		{"1.005", "GBP", 0, "more decimals than GBP allows (2)"},
		{"5000", "KRW", 5000, ""},
		{"1.2345", "CLF", 12345, ""},
		{"999999999999.999", "BHD", 999999999999999, ""},
		{"12", "XXX", 0, "currency: must be an ISO 4217"},
		{"12", "gbp", 0, "currency: must be an ISO 4217"},
		{"1e3", "GBP", 0, "amount: must be written out"},
	}
	for _, tt := range tests {
		got, err := tt.give.Minor(tt.currency)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Amount(%q).Minor(%s) = %d, %v; want error %q", tt.give, tt.currency, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Amount(%q).Minor(%s) = %d, %v; want %d", tt.give, tt.currency, got, err, tt.want)
		}
		back := Amount(FormatMinor(got, tt.currency))
		if again, err := back.Minor(tt.currency); err != nil || again != got {
			t.Errorf("FormatMinor(%d, %s) = %q does not round-trip", got, tt.currency, back)
		}
	}
	for give, want := range map[string]string{"JPY": "1200", "GBP": "12.00", "KWD": "1.200", "CLF": "0.1200"} {
		if got := FormatMinor(1200, give); got != want {
			t.Errorf("FormatMinor(1200, %s) = %q, want %q", give, got, want)
		}
	}
}

func TestCurrencyIsISO4217(t *testing.T) {
	for _, ok := range []string{"GBP", "USD", "EUR", "JPY", "KWD", "CHF", "INR", "XOF"} {
		if !ValidCurrency(ok) {
			t.Errorf("ValidCurrency(%s) = false", ok)
		}
	}
	for _, bad := range []string{"XXX", "XTS", "XAU", "ABC", "QQQ", "gbp", "GB", "GBPX", ""} {
		if ValidCurrency(bad) {
			t.Errorf("ValidCurrency(%q) = true", bad)
		}
	}
	if n := len(minorUnits); n < 150 {
		t.Errorf("the table has %d currencies; ISO 4217 has about 180", n)
	}
}

func TestAmountSchemaTakesNumbersAndStrings(t *testing.T) {
	spec, _ := LookupTool(ToolAddExpense)
	var s struct {
		Properties map[string]struct {
			AnyOf []struct {
				Type string `json:"type"`
			} `json:"anyOf"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(spec.Schema(), &s); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, a := range s.Properties["amount"].AnyOf {
		types = append(types, a.Type)
	}
	if strings.Join(types, ",") != "number,string" {
		t.Errorf("amount schema types = %v, want number,string", types)
	}
}

// FuzzAmount: whatever a model writes as an amount, decoding never panics,
// every failure names the field, and an accepted amount converts to minor
// units that format back to the same value.
func FuzzAmount(f *testing.F) {
	for _, s := range []string{`12.50`, `"12.5"`, `200`, `1e308`, `-5`, `"1,234.50"`, `0.0001`, `"999999999999.9999"`, `[]`, `"£3"`, `"٣"`} {
		f.Add(s, "GBP")
	}
	f.Add(`1200`, "JPY")
	f.Add(`"1.250"`, "KWD")
	f.Fuzz(func(t *testing.T, literal, currency string) {
		var a AddExpenseArgs
		err := Decode([]byte(`{"item":"x","amount":`+literal+`}`), &a)
		if err != nil {
			var verr *ValidationError
			if !errors.As(err, &verr) {
				t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
			}
			return
		}
		minor, err := a.Amount.Minor(currency)
		if err != nil {
			return
		}
		if minor <= 0 {
			t.Fatalf("%s %s became %d minor units", literal, currency, minor)
		}
		if back, err := Amount(FormatMinor(minor, currency)).Minor(currency); err != nil || back != minor {
			t.Fatalf("%d %s formats as %q, which reads back as %d, %v", minor, currency, FormatMinor(minor, currency), back, err)
		}
	})
}

// TestAmountFieldsAreNamedAmount keeps true what jsonError assumes when the
// JSON decoder names no field for an amount of the wrong JSON type: every
// Amount in a tool's arguments is the field "amount".
func TestAmountFieldsAreNamedAmount(t *testing.T) {
	amount := reflect.TypeFor[Amount]()
	for _, spec := range Tools() {
		typ := reflect.TypeOf(spec.NewArgs()).Elem()
		for f := range typ.Fields() {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft == amount && f.Tag.Get("json") != "amount" && !strings.HasPrefix(f.Tag.Get("json"), "amount,") {
				t.Errorf("%s's %s is an Amount named %q in JSON, not amount", spec.Name, f.Name, f.Tag.Get("json"))
			}
		}
	}
}
