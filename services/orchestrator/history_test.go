package orchestrator

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The state keeps only the history a prompt can show, and the model is
// asked with the same history as when the state kept its last 24 entries,
// and told of earlier messages exactly when there are some: for every
// turn that may run next, over many random conversations of requests,
// answers, open questions and proposals, and notes of another turn's
// expired proposal arriving while a turn runs. (With 24 entries kept, a
// prompt whose own turn had entries could miss that older ones were
// dropped, and one whose whole history was open said there was more.)
func TestStoredHistoryIsWhatThePromptShows(t *testing.T) {
	env := testEnv(t0)
	rng := rand.New(rand.NewPCG(38, 1))
	kept, before := 0, 0
	for conv := range 300 {
		var all, full []Entry // the whole conversation; as stored before, its last maxHistory entries
		s := State{}
		turn := 0
		for step := range 60 {
			var e Entry
			switch r := rng.IntN(10); {
			case r < 4: // a request opens a new turn
				turn++
				e = Entry{Role: "user", Text: fmt.Sprintf("request %d", step)}
			case r < 8: // its reply, open (a question, a proposal) or not
				e = Entry{Role: "assistant", Text: fmt.Sprintf("reply %d", step), Open: rng.IntN(2) == 0}
			default: // a note about an older turn's proposal
				e = Entry{Role: "assistant", Text: fmt.Sprintf("note %d", step), TurnID: fmt.Sprintf("T%d", rng.IntN(turn+1))}
			}
			if e.TurnID == "" {
				e.TurnID = fmt.Sprintf("T%d", turn)
			}
			e.At = t0.Add(time.Duration(step) * time.Minute)
			all = append(all, e)
			full = append(full, e)
			if len(full) > maxHistory {
				full = full[len(full)-maxHistory:]
			}
			s = s.withHistory(e)
			kept, before = kept+len(s.History), before+len(full)
			for _, current := range []string{e.TurnID, fmt.Sprintf("T%d", turn), "next"} {
				s.Turn = &Turn{TurnID: current}
				was := PromptFor(State{History: full, Turn: s.Turn}, env)
				got := PromptFor(s, env)
				if diff := cmp.Diff(was.History, got.History); diff != "" {
					t.Fatalf("conversation %d, step %d, turn %s: prompt history (-was +now):\n%s", conv, step, current, diff)
				}
				past := all
				for len(past) > 0 && past[len(past)-1].TurnID == current {
					past = past[:len(past)-1]
				}
				if earlier := len(got.History) < len(past); got.Earlier != earlier {
					t.Fatalf("conversation %d, step %d, turn %s: earlier = %v, want %v", conv, step, current, got.Earlier, earlier)
				}
			}
			s.Turn = nil
		}
	}
	if 2*kept > before {
		t.Errorf("the state held %d entries in all, want at most half the %d it held before", kept, before)
	}
}
