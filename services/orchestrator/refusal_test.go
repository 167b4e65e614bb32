package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// A change asked for by a read-only role is refused at once: the turn ends
// with CodeForbidden and a clear message, with no proposal, no tool call
// and no replan, however the model asked for it.
func TestViewerChangeIsForbidden(t *testing.T) {
	plan := decide(Decision{Kind: DecisionPlan, Plan: &Plan{Steps: []PlanStep{
		{Tool: contracts.ToolAddExpense, Args: json.RawMessage(`{"item":"tea","amount":"2"}`)},
	}}})
	tests := []struct {
		name  string
		roles []string
		give  Event
	}{
		{"one call", []string{"viewer"}, calls(addCall("tea", "2"))},
		{"a read beside the change", []string{"viewer"}, calls(Call{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)}, addCall("tea", "2"))},
		{"a plan", []string{"viewer"}, plan},
		{"no role", nil, calls(addCall("tea", "2"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := testEnv(t0)
			ev := textTurn("t1", "add tea £2")
			ev.Turn.Roles = tt.roles
			s, _ := step(t, State{}, ev, env)
			s, eff := step(t, s, tt.give, env)
			te := only[contracts.TurnError](t, eff, contracts.TypeTurnError)
			if te.Code != contracts.CodeForbidden || !strings.Contains(te.Message, "read-only") || te.RetryAfter != 0 {
				t.Errorf("refusal = %+v, want code %s saying read-only, no retry", te, contracts.CodeForbidden)
			}
			if got := types(eff); got != contracts.TypeTurnError {
				t.Errorf("outputs = %q, want the error alone", got)
			}
			if eff.NeedModel || len(eff.NewProposals) != 0 || s.Turn != nil || len(s.Proposals) != 0 {
				t.Errorf("after the refusal: need model %v, proposals %v, turn %+v; want the turn ended", eff.NeedModel, eff.NewProposals, s.Turn)
			}
		})
	}
}
