package contracts

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/go-playground/validator/v10"
)

// idPattern is the shape of every id that may become a NATS subject token.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidID reports whether s can be used as an id and a subject token.
func ValidID(s string) bool { return idPattern.MatchString(s) }

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
	must("tz", func(fl validator.FieldLevel) bool {
		s := fl.Field().String()
		if s == "" || s == "Local" {
			return false
		}
		_, err := time.LoadLocation(s)
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
