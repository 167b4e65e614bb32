package orchestrator

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestAppliedTurnsTakeLittleOfTheState: a long conversation remembers its
// last 256 turns, to refuse a redelivered one, in a few KB of the state
// that each of its events writes again, and forgets the older ones.
func TestAppliedTurnsTakeLittleOfTheState(t *testing.T) {
	s := State{}
	for i := range 300 {
		s = s.withApplied(fmt.Sprintf("t%032x", i), t0)
	}
	if len(s.Applied) != maxApplied {
		t.Fatalf("%d applied turns remembered, want %d", len(s.Applied), maxApplied)
	}
	b, err := json.Marshal(s.Applied)
	if err != nil {
		t.Fatal(err)
	}
	// 256 whole ids (33 characters each) took 9,473 bytes.
	if len(b) > 256*14+2 {
		t.Errorf("the applied turns take %d bytes of the state, want at most %d", len(b), 256*14+2)
	}
	for i := range 300 {
		id := fmt.Sprintf("t%032x", i)
		if got, want := s.hasApplied(id), i >= 300-maxApplied; got != want {
			t.Errorf("turn %d: applied %v, want %v", i, got, want)
		}
	}
}

// TestAStateStoredWithWholeIDsStillRefusesItsTurns: a conversation saved
// before its applied turns were kept as keys still refuses a redelivered
// turn after an upgrade, and remembers new ones beside the old.
func TestAStateStoredWithWholeIDsStillRefusesItsTurns(t *testing.T) {
	env := testEnv(t0)
	var s State
	if err := json.Unmarshal([]byte(`{"user_id":"ann","history":[],"applied":["t1","t2"],"updated":"2026-11-22T10:00:00Z"}`), &s); err != nil {
		t.Fatal(err)
	}
	again, eff := step(t, s, textTurn("t2", "hello"), env)
	if len(eff.Outputs) != 0 || eff.NeedModel || again.Turn != nil {
		t.Fatalf("a turn applied before the upgrade ran again: %q, model %v", types(eff), eff.NeedModel)
	}
	s, eff = step(t, s, textTurn("t3", "hello"), env)
	if !eff.NeedModel {
		t.Fatalf("a new turn was refused: %q", types(eff))
	}
	if !s.hasApplied("t1") || !s.hasApplied("t3") || s.hasApplied("t4") {
		t.Fatalf("applied %q: want t1 and t3 remembered, t4 not", s.Applied)
	}
}
