package orchestrator

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// A state is stored as the JSON json.Marshal gives (what the states
// stored so far were written as, and what load reads back): nil slices as
// null, text escaped for HTML, times in RFC 3339, raw memory as it is.
func TestAStateIsEncodedAsJSONMarshalEncodesIt(t *testing.T) {
	at := time.Date(2026, 11, 29, 4, 30, 0, 123456789, time.UTC)
	states := []State{
		{},
		{UserID: "u1", Roles: []string{"owner"}, Timezone: "Europe/Paris", History: []Entry{
			{Role: "user", Text: `<b>5 € "café" & more</b>`, TurnID: "t-1", At: at},
			{Role: "assistant", Text: "Add 5 €?", TurnID: "t-1", At: at, Open: true},
		}, Memory: Memory{"lists.expenses": json.RawMessage(`[{"id":"e1","amount":"5.00"}]`)},
			Turn: &Turn{TurnID: "t-1", Text: "5 € café", StartedAt: at}, Applied: []string{"t-1"}, Updated: at},
	}
	var buf bytes.Buffer
	for i, s := range states {
		buf.Reset()
		if err := encodeState(&buf, &s); err != nil {
			t.Fatalf("state %d: %v", i, err)
		}
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Fatalf("state %d encoded as\n%s\nwant\n%s", i, buf.Bytes(), want)
		}
		var back State
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
			t.Fatalf("state %d does not read back: %v", i, err)
		}
	}
}
