package store

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"
)

// An outbox row's headers are what json.Marshal writes for them, byte for
// byte, whether or not a header needs escaping, and read back the same.
func TestOutboxHeadersAreWhatJSONMarshalWrites(t *testing.T) {
	many := map[string]string{}
	for _, k := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o", "p", "q"} {
		many[k] = k + "-value"
	}
	for _, h := range []map[string]string{
		{"Purser-Type": "reply", "Purser-Tenant": "t1", "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00",
			"Purser-Created-At": "2026-11-29T06:50:01.123456789Z", "Purser-Correlation-Id": "turn-1"},
		{"Purser-User": `a "quoted" name`},
		{"Purser-User": `back\slash`},
		{"Purser-Conversation": "<b>&co</b>"},
		{"Purser-User": "zoë"},
		{"Purser-User": "line\nbreak\ttab"},
		{"": ""},
		many,
	} {
		got, err := encodeHeaders(h)
		if err != nil {
			t.Fatalf("encode %v: %v", h, err)
		}
		want, _ := json.Marshal(h)
		if !bytes.Equal(got, want) {
			t.Errorf("encodeHeaders(%v) = %s, json.Marshal writes %s", h, got, want)
		}
		var back map[string]string
		if err := json.Unmarshal(got, &back); err != nil || !maps.Equal(back, h) {
			t.Errorf("%s reads back as %v (%v), want %v", got, back, err, h)
		}
	}
}
