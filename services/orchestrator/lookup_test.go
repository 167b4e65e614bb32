package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/pkg/contracts"
)

const (
	coffee   = `{"id":2,"item":"coffee","amount":{"minor":300,"currency":"GBP"},"date":"2026-11-20","category":"food"}`
	foundTwo = `{"range":"","from":"","to":"","id":2,"expenses":[` + coffee + `],"totals":[{"minor":300,"currency":"GBP"}]}`
	noneNear = `{"range":"","from":"","to":"","id":99999,"expenses":[],"totals":[],"nearby":[` +
		`{"id":3,"item":"tea","amount":{"minor":250,"currency":"GBP"},"date":"2026-11-21"},` +
		`{"id":5,"item":"cake","amount":{"minor":400,"currency":"GBP"},"date":"2026-11-22"}]}`
)

// lookupOf runs a change the model asked for up to the read that looks up
// what it touches, and returns that read's request.
func lookupOf(t *testing.T, env Env, c Call) (State, contracts.ToolRequest) {
	t.Helper()
	s, _ := step(t, State{}, textTurn("t1", "change my expense"), env)
	s, eff := step(t, s, calls(c), env)
	if types(eff) != "tool_progress tool_request" || len(eff.NewProposals) != 0 || len(s.Proposals) != 0 || eff.NeedModel {
		t.Fatalf("a change was proposed before its lookup: %q, %+v", types(eff), eff.NewProposals)
	}
	return s, only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
}

// Proposals are never blind: an update or a deletion is first looked up
// with a read that runs at once (a step of the turn); the proposal then
// shows the expense it touches, and a number with no expense is answered
// at once, naming the nearest numbers, with nothing waiting for a yes.
func TestChangesAreLookedUpBeforeTheyAreProposed(t *testing.T) {
	env := testEnv(t0)
	tests := []struct {
		name        string
		give        Call
		giveData    string
		wantLookup  string
		wantSummary string // "" when no proposal
		wantAnswer  string // "" when proposed
	}{
		{"delete shows the expense", Call{Tool: contracts.ToolDeleteExpense, Args: json.RawMessage(`{"id":2}`)}, foundTwo, `{"id":2}`,
			"Delete expense #2: coffee, £3.00 on 2026-11-20 (food)?", ""},
		{"update shows before and after", Call{Tool: contracts.ToolUpdateExpense, Args: json.RawMessage(`{"id":2,"amount":"4.5","date":"2026-11-21","category":"drinks"}`)}, foundTwo, `{"id":2}`,
			"Change expense #2 (coffee, £3.00 on 2026-11-20 (food)): amount £3.00 → £4.50, date 2026-11-20 → 2026-11-21, category food → drinks?", ""},
		{"update of the item in another currency", Call{Tool: contracts.ToolUpdateExpense, Args: json.RawMessage(`{"id":2,"item":"latte","amount":"5","currency":"EUR"}`)}, foundTwo, `{"id":2}`,
			"Change expense #2 (coffee, £3.00 on 2026-11-20 (food)): item 'coffee' → 'latte', amount £3.00 → €5.00?", ""},
		{"missing delete", Call{Tool: contracts.ToolDeleteExpense, Args: json.RawMessage(`{"id":99999}`)}, noneNear, `{"id":99999}`,
			"", "There is no expense #99999. The nearest numbers are: #3 tea, £2.50 on 2026-11-21; #5 cake, £4.00 on 2026-11-22."},
		{"missing update, no expenses at all", Call{Tool: contracts.ToolUpdateExpense, Args: json.RawMessage(`{"id":7,"amount":"1"}`)},
			`{"range":"","from":"","to":"","id":7,"expenses":[],"totals":[]}`, `{"id":7}`, "", "There is no expense #7. You have no expenses yet."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, req := lookupOf(t, env, tt.give)
			if req.Tool != contracts.ToolListExpenses || string(req.Args) != tt.wantLookup || req.ProposalID != "" {
				t.Fatalf("lookup = %s %s, want list_expenses %s", req.Tool, req.Args, tt.wantLookup)
			}
			if s.Turn.StepsUsed != 1 {
				t.Errorf("steps used = %d, want 1 (the lookup)", s.Turn.StepsUsed)
			}
			got, eff := step(t, s, result(req.CallID, req.Tool, true, tt.giveData, ""), env)
			if eff.NeedModel || got.Turn != nil {
				t.Fatalf("the turn went on after the lookup: need model %v, turn %+v", eff.NeedModel, got.Turn)
			}
			if got.Memory["lists.expenses"] != nil {
				t.Errorf("the lookup replaced the listing in working memory")
			}
			if tt.wantAnswer != "" {
				if a := only[contracts.Answer](t, eff, contracts.TypeAnswer); a.Content != tt.wantAnswer {
					t.Errorf("answer = %q, want %q", a.Content, tt.wantAnswer)
				}
				if len(got.Proposals) != 0 || len(eff.NewProposals) != 0 || strings.Contains(types(eff), contracts.TypeProposal) {
					t.Errorf("a missing expense was proposed: %+v", got.Proposals)
				}
				return
			}
			p := only[contracts.Proposal](t, eff, contracts.TypeProposal)
			if p.Summary != tt.wantSummary {
				t.Errorf("summary = %q, want %q", p.Summary, tt.wantSummary)
			}
			if len(got.Proposals) != 1 || got.Proposals[0].Tool != tt.give.Tool || string(got.Proposals[0].Seen) != tt.giveData {
				t.Fatalf("pending = %+v", got.Proposals)
			}
			// The lookup's result delivered again changes nothing.
			again, dup := step(t, got, result(req.CallID, req.Tool, true, tt.giveData, ""), env)
			if len(dup.Outputs) != 0 || len(dup.NewProposals) != 0 {
				t.Errorf("redelivered lookup produced %q", types(dup))
			}
			if diff := cmp.Diff(got, again); diff != "" {
				t.Errorf("redelivered lookup changed the state:\n%s", diff)
			}
		})
	}
}

// The lookup is a step like any other: it counts toward MaxSteps, its
// failure is a failed step (the model is asked again with the reason), a
// person who may only read is refused without one, and the yes runs exactly
// the change proposed.
func TestLookupIsAStep(t *testing.T) {
	env := testEnv(t0)
	del := Call{Tool: contracts.ToolDeleteExpense, Args: json.RawMessage(`{"id":2}`)}
	t.Run("counts toward the cap", func(t *testing.T) {
		s, _ := step(t, State{}, textTurn("t1", "x"), env)
		s.Turn.StepsUsed = MaxSteps - 1
		got, eff := step(t, s, calls(del), env)
		if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Code != contracts.CodeLimit || got.Turn != nil {
			t.Fatalf("got %+v", te)
		}
	})
	t.Run("a failed lookup is a failed step", func(t *testing.T) {
		s, req := lookupOf(t, env, del)
		got, eff := step(t, s, result(req.CallID, req.Tool, false, "", "rate limited"), env)
		if !eff.NeedModel || len(got.Proposals) != 0 || got.Turn.Failure != "rate limited" {
			t.Fatalf("need model %v, proposals %+v, failure %q", eff.NeedModel, got.Proposals, got.Turn.Failure)
		}
	})
	t.Run("read-only is refused at once", func(t *testing.T) {
		viewer := textTurn("t1", "x")
		viewer.Turn.Roles = []string{contracts.RoleViewer}
		s, _ := step(t, State{}, viewer, env)
		_, eff := step(t, s, calls(del), env)
		if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Code != contracts.CodeForbidden {
			t.Fatalf("got %+v", te)
		}
	})
	t.Run("the yes runs the change", func(t *testing.T) {
		s, req := lookupOf(t, env, del)
		s, eff := step(t, s, result(req.CallID, req.Tool, true, foundTwo, ""), env)
		p := only[contracts.Proposal](t, eff, contracts.TypeProposal)
		_, eff = step(t, s, confirmTurn("t2", p.ProposalID, "approve", ""), env)
		run := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
		if run.Tool != contracts.ToolDeleteExpense || string(run.Args) != `{"id":2}` || run.ProposalID != p.ProposalID {
			t.Fatalf("the yes ran %+v", run)
		}
	})
	t.Run("an edit keeps showing the expense", func(t *testing.T) {
		s, req := lookupOf(t, env, Call{Tool: contracts.ToolUpdateExpense, Args: json.RawMessage(`{"id":2,"amount":"4"}`)})
		s, eff := step(t, s, result(req.CallID, req.Tool, true, foundTwo, ""), env)
		p := only[contracts.Proposal](t, eff, contracts.TypeProposal)
		_, eff = step(t, s, confirmTurn("t2", p.ProposalID, "edit", `{"id":2,"amount":"5"}`), env)
		if len(eff.NewProposals) != 1 || eff.NewProposals[0].Summary != "Change expense #2 (coffee, £3.00 on 2026-11-20 (food)): amount £3.00 → £5.00?" {
			t.Fatalf("edited proposal = %+v", eff.NewProposals)
		}
	})
}

// A plan's deletion is looked up too, and the rest of the plan carries on
// after the yes.
func TestPlannedChangeIsLookedUp(t *testing.T) {
	env := testEnv(t0)
	plan := &Plan{Steps: []PlanStep{
		{Tool: contracts.ToolDeleteExpense, Args: json.RawMessage(`{"id":2}`)},
		{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{"range":"this_month"}`)},
	}}
	s, _ := step(t, State{}, textTurn("t1", "delete 2 and show my month"), env)
	s, eff := step(t, s, decide(Decision{Kind: DecisionPlan, Plan: plan}), env)
	look := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if look.Tool != contracts.ToolListExpenses || string(look.Args) != `{"id":2}` {
		t.Fatalf("plan step ran %s %s, want the lookup", look.Tool, look.Args)
	}
	s, eff = step(t, s, result(look.CallID, look.Tool, true, foundTwo, ""), env)
	p := only[contracts.Proposal](t, eff, contracts.TypeProposal)
	if p.Summary != "Delete expense #2: coffee, £3.00 on 2026-11-20 (food)?" || len(s.Proposals) != 1 || s.Proposals[0].Plan == nil {
		t.Fatalf("proposal %q, pending %+v", p.Summary, s.Proposals)
	}
	s, eff = step(t, s, confirmTurn("t2", p.ProposalID, "approve", ""), env)
	del := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	_, eff = step(t, s, result(del.CallID, del.Tool, true, `{"expense":`+coffee+`}`, ""), env)
	if list := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest); list.Tool != contracts.ToolListExpenses || string(list.Args) != `{"range":"this_month"}` {
		t.Fatalf("the plan did not carry on: %+v", list)
	}
}
