package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
)

// MaxMessageBytes bounds any payload Decode accepts.
const MaxMessageBytes = 1 << 20

// ValidationError says which field of a message was wrong and how. Field is
// the JSON path ("confirm.decision"); it is empty when the message as a whole
// is malformed. The message never quotes the offending value, so it is safe to
// return to a client.
type ValidationError struct {
	Field   string
	Problem string
}

func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

// ErrInvalid matches every error Decode and Validate return for bad input.
var ErrInvalid = errors.New("invalid message")

// Is makes errors.Is(err, ErrInvalid) true for validation errors.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// Decode parses data as exactly one JSON object into v, rejecting unknown
// fields, wrong types and trailing data, then validates v. Every error it
// returns is a *ValidationError naming the field at fault.
func Decode(data []byte, v any) error {
	if len(data) > MaxMessageBytes {
		return &ValidationError{Problem: fmt.Sprintf("message is larger than %d bytes", MaxMessageBytes)}
	}
	if !utf8.Valid(data) {
		// encoding/json would turn the bad bytes into U+FFFD silently.
		return &ValidationError{Problem: "message is not valid UTF-8"}
	}
	if strictUnmarshal(data, v) != nil {
		// The decoder reads the message again to say what was wrong in
		// its own words: messages are well formed almost always, and it
		// costs about twice the time of one call.
		return decodeError(data, v)
	}
	return Validate(v)
}

// decodeError is the *ValidationError of data that strictUnmarshal
// refused: its first problem, or that it holds more than one value.
func decodeError(data []byte, v any) error {
	switch err := decodeStrict(data, v); {
	case errors.Is(err, errTrailing):
		return &ValidationError{Problem: "unexpected data after the JSON object"}
	case err != nil:
		return jsonError(err)
	}
	return &ValidationError{Problem: "malformed JSON"}
}

// decodeStrict decodes data, exactly one JSON value, into v with unknown
// fields refused, through a json.Decoder: errTrailing if more follows.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errTrailing
	}
	return nil
}

// errTrailing is data after the one JSON value.
var errTrailing = errors.New("unexpected data after the JSON value")

// Validate checks v's validate tags and returns the first problem as a
// *ValidationError.
func Validate(v any) error {
	err := validate.Struct(v)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if errors.As(err, &verrs) && len(verrs) > 0 {
		fe := verrs[0]
		return &ValidationError{Field: fieldPath(fe.Namespace()), Problem: describe(fe)}
	}
	var inv *validator.InvalidValidationError
	if errors.As(err, &inv) {
		return &ValidationError{Problem: "message must be a JSON object"}
	}
	return &ValidationError{Problem: "invalid message"}
}

// fieldPath drops the root type name from a validator namespace.
func fieldPath(ns string) string {
	if _, rest, ok := strings.Cut(ns, "."); ok {
		return rest
	}
	return ns
}

func describe(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return "is required"
	case "required_without":
		return "is required unless " + strings.ToLower(fe.Param()) + " is given"
	case "excluded_with":
		return "must not be given together with " + strings.ToLower(fe.Param())
	case "required_if":
		return "is required when " + fieldIs(fe.Param())
	case "required_unless":
		return "is required unless " + fieldIs(fe.Param())
	case "excluded_if":
		return "must not be given when " + fieldIs(fe.Param())
	case "excluded_unless":
		return "is only allowed when " + fieldIs(fe.Param())
	case "unique":
		return "must not name the same id twice"
	case "edit_args":
		return "is required when decision is edit"
	case "args_only_edit":
		return "is only allowed when decision is edit"
	case "text":
		return "must be valid UTF-8 text without NUL, control or bidirectional-override characters"
	case "purserid":
		return "must be 1-64 letters, digits, '_' or '-'"
	case "oneof":
		return "must be one of: " + strings.ReplaceAll(fe.Param(), " ", ", ")
	case "max":
		if fe.Kind() == reflect.Slice {
			return "names too many (at most " + fe.Param() + ")"
		}
		return "is too long (at most " + fe.Param() + ")"
	case "min":
		if fe.Kind() == reflect.Slice {
			return "names too few (at least " + fe.Param() + ")"
		}
		return "is too short (at least " + fe.Param() + ")"
	case "gte":
		return "must be at least " + fe.Param()
	case "lte":
		return "must be at most " + fe.Param()
	case "daterange":
		return "must be a range: " + RangeGrammar
	case "date":
		return "must be a date YYYY-MM-DD"
	case "amount":
		if p := amountProblem(fe.Value()); p != "" {
			return p
		}
		return "must be a positive amount such as 12.50"
	case "amount_currency":
		var verr *ValidationError
		if a, ok := fe.Value().(Amount); ok {
			if _, err := a.Minor(fe.Param()); errors.As(err, &verr) {
				return verr.Problem
			}
		}
		return "has more decimals than " + fe.Param() + " allows"
	case "currency":
		return "must be an ISO 4217 currency code such as GBP, EUR or JPY"
	case "tz":
		return "must be an IANA time zone such as Europe/London"
	case "url":
		return "must be a URL"
	}
	return "is invalid (" + fe.Tag() + ")"
}

// jsonError turns an encoding/json error into a ValidationError without
// echoing the input.
func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return &ValidationError{Problem: fmt.Sprintf("malformed JSON at byte %d", syn.Offset)}
	case errors.As(err, &typ):
		field := typ.Field
		if typ.Type == reflect.TypeFor[Amount]() {
			// encoding/json built on json/v2 (the baseline for Go 1.27, and Go 1.26
			// with GOEXPERIMENT=jsonv2) leaves Field empty for an error that
			// Amount.UnmarshalJSON returns; every Amount field is "amount"
			// (TestAmountFieldsAreNamedAmount).
			if field == "" {
				field = "amount"
			}
			return &ValidationError{Field: field, Problem: "must be a number or a string such as 12.50"}
		}
		if field == "" {
			return &ValidationError{Problem: "message must be a JSON object"}
		}
		return &ValidationError{Field: field, Problem: "must be " + jsonKind(typ.Type.Kind().String())}
	case errors.Is(err, io.EOF):
		return &ValidationError{Problem: "empty message"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &ValidationError{Problem: "truncated JSON"}
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return &ValidationError{Field: strings.Trim(name, `"`), Problem: "unknown field"}
	}
	return &ValidationError{Problem: "malformed JSON"}
}

func amountProblem(v any) string {
	switch x := v.(type) {
	case Amount:
		return x.Problem()
	case *Amount:
		if x != nil {
			return x.Problem()
		}
	case string:
		return Amount(x).Problem()
	}
	return ""
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "a list"
	case "struct", "map", "ptr":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return "of another type"
}

// fieldIs reads a validator condition such as "Decision approve_all" as
// "decision is approve_all".
func fieldIs(param string) string {
	field, value, _ := strings.Cut(param, " ")
	return strings.ToLower(field) + " is " + value
}
