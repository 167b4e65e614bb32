package orchestrator

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// proposeThree runs a turn to the point where three add_expense calls of
// one decision wait for a yes each.
func proposeThree(t *testing.T, env Env) (State, []contracts.Proposal) {
	t.Helper()
	s, _ := step(t, State{}, textTurn("t1", "lunch £12, taxi £20 and cinema £9"), env)
	s, eff := step(t, s, calls(addCall("lunch", "12"), addCall("taxi", "20"), addCall("cinema", "9")), env)
	var ps []contracts.Proposal
	for _, o := range eff.Outputs {
		if p, ok := o.Payload.(contracts.Proposal); ok {
			ps = append(ps, p)
		}
	}
	if len(ps) != 3 || len(s.Proposals) != 3 {
		t.Fatalf("want three proposals, got %q", types(eff))
	}
	return s, ps
}

func approveAll(id string, ids ...string) Event {
	e := textTurn(id, "")
	e.Turn.Text = ""
	e.Turn.Confirm = &contracts.Confirm{Decision: contracts.DecisionApproveAll, ProposalIDs: ids}
	return e
}

func idsOf(ps []contracts.Proposal) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ProposalID)
	}
	return out
}

func requests(eff Effects) []contracts.ToolRequest {
	var out []contracts.ToolRequest
	for _, o := range eff.Outputs {
		if r, ok := o.Payload.(contracts.ToolRequest); ok {
			out = append(out, r)
		}
	}
	return out
}

// An approve_all over every waiting proposal runs each one, with exactly
// its stored args under its own id, and the turn ends with each one's
// outcome; the same decision again, or a second click, runs nothing.
func TestApproveAllRunsEachProposalOnce(t *testing.T) {
	env := testEnv(t0)
	s, ps := proposeThree(t, env)
	s, eff := step(t, s, approveAll("t2", idsOf(ps)...), env)
	reqs := requests(eff)
	if len(reqs) != 3 {
		t.Fatalf("approve_all ran %d calls (%q), want 3", len(reqs), types(eff))
	}
	for i, r := range reqs {
		if r.ProposalID != ps[i].ProposalID || string(r.Args) != string(ps[i].Args) || r.Tool != ps[i].Tool {
			t.Errorf("call %d = %s %s for %s, want %s %s for %s", i, r.Tool, r.Args, r.ProposalID, ps[i].Tool, ps[i].Args, ps[i].ProposalID)
		}
	}
	var approved []string
	for _, c := range eff.Changes {
		if c.From == "pending" && c.To == "approved" {
			approved = append(approved, c.ID)
		}
	}
	if !slices.Equal(approved, idsOf(ps)) || len(s.Proposals) != 0 {
		t.Fatalf("approved %v (still waiting %d), want all three", approved, len(s.Proposals))
	}
	// Redelivered: nothing again. A second click (its own turn): refused.
	if _, again := step(t, s, approveAll("t2", idsOf(ps)...), env); len(again.Outputs) != 0 {
		t.Fatalf("redelivered approve_all emitted %q", types(again))
	}
	queued, eff2 := step(t, s, approveAll("t3", idsOf(ps)...), env)
	if len(eff2.Outputs) != 0 || len(queued.Queue) != 1 {
		t.Fatalf("a second click while the batch runs: %q", types(eff2))
	}

	// Two succeed, one is refused by the tool: the others stand, and the
	// answer reports each.
	expense := func(id int, item string, minor int) string {
		return fmt.Sprintf(`{"expense":{"id":%d,"item":"%s","amount":{"minor":%d,"currency":"GBP"},"date":"2026-11-22"}}`, id, item, minor)
	}
	s, eff = step(t, queued, result(reqs[0].CallID, contracts.ToolAddExpense, true, expense(1, "lunch", 1200), ""), env)
	if eff.NeedModel || strings.Contains(types(eff), contracts.TypeAnswer) {
		t.Fatalf("answered before every call was back: %q", types(eff))
	}
	s, _ = step(t, s, result(reqs[2].CallID, contracts.ToolAddExpense, true, expense(2, "cinema", 900), ""), env)
	s, eff = step(t, s, result(reqs[1].CallID, contracts.ToolAddExpense, false, "", "limit reached"), env)
	if eff.NeedModel {
		t.Fatal("a batch asked the model after its calls; its outcome is the server's own")
	}
	a := only[contracts.Answer](t, eff, contracts.TypeAnswer)
	want := []contracts.BatchItem{{ProposalID: ps[0].ProposalID, Status: "executed"}, {ProposalID: ps[1].ProposalID, Status: "failed"}, {ProposalID: ps[2].ProposalID, Status: "executed"}}
	if len(a.Batch) != 3 {
		t.Fatalf("answer batch = %+v", a.Batch)
	}
	for i, it := range a.Batch {
		if it.ProposalID != want[i].ProposalID || it.Status != want[i].Status || it.Summary == "" {
			t.Errorf("batch item %d = %+v, want %+v", i, it, want[i])
		}
	}
	if !strings.HasPrefix(a.Content, "Done: 2 of 3 changes made.") || !strings.Contains(a.Content, "lunch") || !strings.Contains(a.Content, "limit reached") {
		t.Errorf("answer = %q", a.Content)
	}
	// The second click, queued behind the batch, is refused: nothing ran twice.
	te := only[contracts.TurnError](t, eff, contracts.TypeTurnError)
	if te.TurnID != "t3" || te.Code != contracts.CodeProposalInvalid || len(requests(eff)) != 0 {
		t.Fatalf("second click = %+v with %q", te, types(eff))
	}
	if s.Turn != nil {
		t.Fatal("the batch turn did not end")
	}
}

// One id that is not a waiting proposal of this conversation (made up,
// another person's, already decided, expired) refuses the whole batch,
// and nothing runs or changes: every proposal still waits. The refusal
// lists each such id with its reason, for the client; its words name a
// proposal of this conversation by what it would do, and never repeat an
// id that is not one (another person's).
func TestApproveAllIsAllOrNothing(t *testing.T) {
	env := testEnv(t0)
	s, ps := proposeThree(t, env)
	ids := idsOf(ps)
	tests := []struct {
		name    string
		give    []string
		state   func(State) State
		at      time.Time
		want    string
		refused []contracts.RefusedProposal
	}{
		{name: "another person's id", give: []string{ids[0], "pof-someone-else", ids[2]}, want: "1 of them is no longer waiting for your yes",
			refused: []contracts.RefusedProposal{{ProposalID: "pof-someone-else", Reason: "not_waiting"}}},
		{name: "a decided id", give: []string{ids[0], ids[1]}, state: func(s State) State { s.Proposals = s.Proposals[1:]; return s },
			want: "1 of them is no longer waiting", refused: []contracts.RefusedProposal{{ProposalID: ids[0], Reason: "not_waiting"}}},
		{name: "an expired id", give: ids, at: t0.Add(2 * time.Minute), state: func(s State) State {
			s.Proposals[1].ExpiresAt = t0.Add(time.Minute)
			return s
		}, want: "Add expense 'taxi' £20.00 on 2026-11-22? has expired", refused: []contracts.RefusedProposal{{ProposalID: ids[1], Reason: "expired"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.clone()
			if tt.state != nil {
				before = tt.state(before)
			}
			at := env
			if !tt.at.IsZero() {
				at = testEnv(tt.at)
			}
			after, eff := step(t, before, approveAll("t9", tt.give...), at)
			te := only[contracts.TurnError](t, eff, contracts.TypeTurnError)
			if te.Code != contracts.CodeProposalInvalid || !strings.Contains(te.Message, tt.want) || !strings.HasPrefix(te.Message, "Nothing was changed") {
				t.Errorf("refusal = %+v, want it to say %q", te, tt.want)
			}
			if !slices.Equal(te.Refused, tt.refused) {
				t.Errorf("refused = %+v, want %+v", te.Refused, tt.refused)
			}
			for _, id := range tt.give {
				if strings.Contains(te.Message, id) {
					t.Errorf("the refusal's words carry the id %s: %q", id, te.Message)
				}
			}
			if err := contracts.Validate(te); err != nil {
				t.Errorf("the refusal is not a valid turn error: %v", err)
			}
			if len(requests(eff)) != 0 || after.Turn != nil {
				t.Fatalf("a refused batch ran something: %q", types(eff))
			}
			for _, c := range eff.Changes {
				if c.To != "expired" {
					t.Errorf("a refused batch changed %+v", c)
				}
			}
			for _, p := range before.Proposals {
				if p.ExpiresAt.After(at.Now) && !slices.ContainsFunc(after.Proposals, func(q PendingProposal) bool { return q.ID == p.ID }) {
					t.Errorf("proposal %s no longer waits after a refused batch", p.ID)
				}
			}
		})
	}
}
