package contracts

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"
)

// ValidID reports whether s can be used as an id and a subject token:
// 1-64 ASCII letters, digits, '_' or '-'. (A loop, not a regexp: every
// message checks several ids, and the regexp cost more than the decode.)
func ValidID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// localeRe is a BCP 47 language tag as clients send it: "fr", "fr-FR",
// "en_GB".
var localeRe = regexp.MustCompile(`^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,3}$`)

// ValidLocale reports whether s is a language tag as clients send it.
func ValidLocale(s string) bool { return localeRe.MatchString(s) }

// Language is the language of a locale purser speaks: "fr" or "en".
func Language(locale string) string {
	if len(locale) >= 2 && strings.EqualFold(locale[:2], "fr") {
		return "fr"
	}
	return "en"
}

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" {
			return f.Name
		}
		return name
	})
	must := func(tag string, fn validator.Func) {
		if err := v.RegisterValidation(tag, fn); err != nil {
			// Registration only fails for an empty tag or nil func: a programming error.
			panic(err)
		}
	}
	must("text", func(fl validator.FieldLevel) bool { return SafeText(fl.Field().String()) })
	must("purserid", func(fl validator.FieldLevel) bool { return ValidID(fl.Field().String()) })
	must("daterange", func(fl validator.FieldLevel) bool { return ValidRange(fl.Field().String()) })
	must("date", func(fl validator.FieldLevel) bool {
		_, err := time.Parse(time.DateOnly, fl.Field().String())
		return err == nil
	})
	must("amount", func(fl validator.FieldLevel) bool { return Amount(fl.Field().String()).Problem() == "" })
	must("currency", func(fl validator.FieldLevel) bool { return ValidCurrency(fl.Field().String()) })
	must("locale", func(fl validator.FieldLevel) bool { return localeRe.MatchString(fl.Field().String()) })
	must("tz", func(fl validator.FieldLevel) bool {
		s := fl.Field().String()
		if s == "" || s == "Local" {
			return false
		}
		_, err := LoadZone(s)
		return err == nil
	})
	v.RegisterStructValidation(func(sl validator.StructLevel) {
		// The currency decides how many decimals the amount may have.
		a := sl.Current().Interface().(AddExpenseArgs)
		if a.Currency == nil || !ValidCurrency(*a.Currency) || a.Amount.Problem() != "" {
			return
		}
		if _, err := a.Amount.Minor(*a.Currency); err != nil {
			sl.ReportError(a.Amount, "amount", "Amount", "amount_currency", *a.Currency)
		}
	}, AddExpenseArgs{})
	v.RegisterStructValidation(func(sl validator.StructLevel) {
		var decision string
		var args json.RawMessage
		switch c := sl.Current().Interface().(type) {
		case Confirm:
			decision, args = c.Decision, c.Args
		case ConfirmFrame:
			decision, args = c.Decision, c.Args
		}
		hasArgs := len(args) > 0 && string(args) != "null"
		switch {
		case decision == "edit" && !hasArgs:
			sl.ReportError(args, "args", "Args", "edit_args", "")
		case decision != "edit" && hasArgs:
			sl.ReportError(args, "args", "Args", "args_only_edit", "")
		}
	}, Confirm{}, ConfirmFrame{})
	return v
}

var validate = newValidator()
