package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// A turn runs at most 5 tool steps: five reads one after another run, and
// a model that asks for a 6th ends the turn with the limit message. The
// numbers are literal so that the test fails if the cap moves.
func TestAtMostFiveStepsPerTurn(t *testing.T) {
	list := Call{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)}
	t.Run("one after another", func(t *testing.T) {
		env := testEnv(t0)
		s, _ := step(t, State{}, textTurn("t1", "look around"), env)
		for i := 1; i <= 5; i++ {
			var eff Effects
			s, eff = step(t, s, calls(list), env)
			req := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
			s, eff = step(t, s, result(req.CallID, req.Tool, true, `{"expenses":[]}`, ""), env)
			if !eff.NeedModel || s.Turn == nil {
				t.Fatalf("after step %d: the model is not asked again (%+v)", i, eff)
			}
		}
		s, eff := step(t, s, calls(list), env)
		checkLimit(t, s, eff)
	})
	t.Run("at once", func(t *testing.T) {
		tests := []struct {
			give    int
			refused bool
		}{
			{5, false},
			{6, true},
		}
		for _, tt := range tests {
			env := testEnv(t0)
			s, _ := step(t, State{}, textTurn("t1", "look around"), env)
			var cs []Call
			for range tt.give {
				cs = append(cs, list)
			}
			s, eff := step(t, s, calls(cs...), env)
			if tt.refused {
				checkLimit(t, s, eff)
				continue
			}
			if got := strings.Count(types(eff), contracts.TypeToolRequest); got != tt.give {
				t.Errorf("%d calls at once sent %d tool requests (%q)", tt.give, got, types(eff))
			}
		}
	})
	t.Run("a plan", func(t *testing.T) {
		env := testEnv(t0)
		s, _ := step(t, State{}, textTurn("t1", "look around"), env)
		var steps []PlanStep
		for i := range 6 {
			steps = append(steps, PlanStep{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`), SaveAs: fmt.Sprintf("lists.l%d", i)})
		}
		s, eff := step(t, s, decide(Decision{Kind: DecisionPlan, Plan: &Plan{Steps: steps}}), env)
		checkLimit(t, s, eff)
	})
}

// checkLimit fails unless eff ends the turn with the 5-step limit and
// starts no tool.
func checkLimit(t *testing.T, s State, eff Effects) {
	t.Helper()
	te := only[contracts.TurnError](t, eff, contracts.TypeTurnError)
	if te.Code != contracts.CodeLimit || !strings.Contains(te.Message, "more than 5 steps") {
		t.Errorf("6th step = %+v, want %s saying more than 5 steps", te, contracts.CodeLimit)
	}
	if strings.Contains(types(eff), contracts.TypeToolRequest) || s.Turn != nil {
		t.Errorf("6th step: outputs %q, turn %+v; want no tool started and the turn ended", types(eff), s.Turn)
	}
}
