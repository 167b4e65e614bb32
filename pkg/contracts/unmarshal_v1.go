//go:build !goexperiment.jsonv2

package contracts

// strictUnmarshal decodes data, exactly one JSON value, into v with
// unknown fields refused (see the jsonv2 build's).
func strictUnmarshal(data []byte, v any) error { return decodeStrict(data, v) }
