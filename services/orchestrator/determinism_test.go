package orchestrator

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/pkg/contracts"
)

// replay plays a turn from s: a plan of four reads, each saving its
// result, then a plan whose one step names two values memory does not
// hold. Each result goes to the call the previous step started. It
// returns every state and every effect, in order.
func replay(t *testing.T, s State, env Env) ([]State, []Effects) {
	t.Helper()
	var states []State
	var effs []Effects
	apply := func(ev Event) Effects {
		var eff Effects
		s, eff = Transition(s, ev, env)
		states, effs = append(states, s), append(effs, eff)
		return eff
	}
	apply(textTurn("t1", "list my expenses four ways"))
	plan := &Plan{}
	for i := range 4 {
		plan.Steps = append(plan.Steps, PlanStep{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`),
			SaveAs: fmt.Sprintf("lists.saved_%d", i)})
	}
	eff := apply(decide(Decision{Kind: DecisionPlan, Plan: plan}))
	for range 4 {
		var callID string
		for _, o := range eff.Outputs {
			if o.To == ToTool {
				callID = o.ID
			}
		}
		if callID == "" {
			t.Fatalf("no tool call started: %q", types(eff))
		}
		eff = apply(result(callID, contracts.ToolListExpenses, true, `{"expenses":[],"range":"this_month"}`, ""))
	}
	apply(decide(Decision{Kind: DecisionPlan, Plan: &Plan{Steps: []PlanStep{{Tool: contracts.ToolListExpenses,
		Args: json.RawMessage(`{"range":{"$var":"missing.range"},"category":{"$var":"missing.category"}}`)}}}}))
	return states, effs
}

// The same events on the same state give the same states and outputs,
// even where a decision could have followed map order: memory over its
// bound drops lists, and a plan step with two missing values names one
// of them in its failure.
func TestTransitionIsDeterministic(t *testing.T) {
	env := testEnv(t0)
	s := State{Memory: Memory{}}
	for i := range maxMemoryValues + 8 {
		s.Memory[fmt.Sprintf("lists.old_%02d", i)] = json.RawMessage(fmt.Sprintf(`[%d]`, i))
	}
	s.Memory["entities.balance"] = json.RawMessage(`{"count":1}`)

	states, effs := replay(t, s.clone(), env)
	again, effsAgain := replay(t, s.clone(), env)
	if diff := cmp.Diff(states, again); diff != "" {
		t.Fatalf("states differ between two runs (-first +second):\n%s", diff)
	}
	if diff := cmp.Diff(effs, effsAgain); diff != "" {
		t.Fatalf("effects differ between two runs (-first +second):\n%s", diff)
	}

	// The run did reach both decisions: memory was over its bound, and
	// the last step failed on a missing value.
	last := states[len(states)-1]
	if n := len(last.Memory); n > maxMemoryValues {
		t.Fatalf("memory holds %d values, want at most %d", n, maxMemoryValues)
	}
	if _, ok := last.Memory["lists.saved_3"]; !ok {
		t.Fatalf("the last step's own result was dropped from memory: %v", slices.Sorted(maps.Keys(last.Memory)))
	}
	if last.Turn == nil || last.Turn.Failure != "step 1 (list_expenses): missing.category: missing value" {
		t.Fatalf("turn after the failing step = %+v, want it to re-plan on the first missing value in key order", last.Turn)
	}
}
