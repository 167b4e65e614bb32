//go:build !goexperiment.jsonv2

package contracts

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// strictUnmarshal decodes data, exactly one JSON value, into v with
// unknown fields refused (see the jsonv2 build's).
func strictUnmarshal(data []byte, v any) error {
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
