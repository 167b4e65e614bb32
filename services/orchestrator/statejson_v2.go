//go:build goexperiment.jsonv2

package orchestrator

import (
	"bytes"
	"encoding/json"
	jsonv2 "encoding/json/v2"
)

// encodeState appends s's JSON to buf, the bytes json.Marshal gives. With
// json/v2 underneath (GOEXPERIMENT=jsonv2, as make builds purser) it is
// written straight into buf: json.Marshal clones what it encoded (about 5
// KB a state), and a json.Encoder on buf allocated 22 KB a call.
func encodeState(buf *bytes.Buffer, s *State) error {
	return jsonv2.MarshalWrite(buf, s, json.DefaultOptionsV1())
}
