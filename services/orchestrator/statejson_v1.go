//go:build !goexperiment.jsonv2

package orchestrator

import (
	"bytes"
	"encoding/json"
)

// encodeState appends s's JSON to buf, the bytes json.Marshal gives.
func encodeState(buf *bytes.Buffer, s *State) error {
	b, err := json.Marshal(s)
	buf.Write(b)
	return err
}
