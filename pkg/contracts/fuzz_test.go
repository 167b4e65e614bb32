package contracts

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to every decoder a client or the bus can
// reach. Decoding must never panic, every failure must be a
// *ValidationError, and anything accepted must re-encode and decode again.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"type":"confirm","proposal_id":"p1","decision":"edit","args":{"id":1}}`))
	f.Add([]byte(`{"type":"resume","after_seq":1e99}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(err error) {
			var verr *ValidationError
			if err != nil && !errors.As(err, &verr) {
				t.Fatalf("error %v (%T) is not a *ValidationError", err, err)
			}
		}
		if _, err := DecodeClientFrame(data); err != nil {
			check(err)
		}
		for _, v := range []any{new(UserTurn), new(ToolRequest), new(ToolResult), new(Answer), new(Notification)} {
			err := Decode(data, v)
			check(err)
			if err != nil {
				continue
			}
			again, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("re-encode accepted value: %v", err)
			}
			if err := Decode(again, v); err != nil {
				t.Fatalf("accepted value does not decode after re-encoding: %v\n%s", err, again)
			}
		}
		for _, spec := range Tools() {
			_, err := spec.DecodeArgs(data)
			check(err)
		}
	})
}
