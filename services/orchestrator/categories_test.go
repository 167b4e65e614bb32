package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

const unityMatches = `{"pattern":"unity","count":3,"entries":[
	{"kind":"transaction","id":7,"date":"2026-11-05","description":"CARD 1234","merchant":"Unity Technologies","amount":{"minor":-1500,"currency":"USD"},"category":"other"},
	{"kind":"expense","id":2,"date":"2026-11-03","description":"Unity Pro seat","amount":{"minor":-4000,"currency":"GBP"},"category":"other"}]}`

// A change that names a pattern is looked up first: its proposal shows
// how many entries match and the newest of them, from the server's read;
// a pattern that names nothing is answered at once, with no proposal.
func TestRuleChangesAreLookedUpBeforeTheyAreProposed(t *testing.T) {
	env := testEnv(t0)
	tests := []struct {
		name        string
		give        Call
		giveData    string
		wantLookup  string
		wantSummary string // "" when an answer is wanted instead
		wantAnswer  string
	}{
		{"recategorize lists what it files", Call{Tool: contracts.ToolRecategorize, Args: json.RawMessage(`{"pattern":"Unity","category":"software"}`)},
			unityMatches, `{"pattern":"Unity"}`,
			"File 3 entries matching 'unity' under software?\n- 2026-11-05 CARD 1234 (Unity Technologies), -$15.00, now other\n- 2026-11-03 Unity Pro seat, -£40.00, now other\n- and 1 more", ""},
		{"recategorize of nothing", Call{Tool: contracts.ToolRecategorize, Args: json.RawMessage(`{"pattern":"zzz","category":"software","range":"last_month"}`)},
			`{"pattern":"zzz","range":"last_month","from":"2026-10-01","to":"2026-10-31","count":0,"entries":[]}`, `{"pattern":"zzz","range":"last_month"}`,
			"", "None of your entries last month match 'zzz', so there is nothing to file."},
		{"new rule says what it matches", Call{Tool: contracts.ToolSetRule, Args: json.RawMessage(`{"pattern":"unity","category":"software"}`)},
			unityMatches, `{"pattern":"unity"}`,
			"From now on, file entries matching 'unity' under software? It matches 3 of your entries now; they keep their category:\n- 2026-11-05 CARD 1234 (Unity Technologies), -$15.00, now other\n- 2026-11-03 Unity Pro seat, -£40.00, now other\n- and 1 more", ""},
		{"changed rule says before and after", Call{Tool: contracts.ToolSetRule, Args: json.RawMessage(`{"pattern":"spotify","category":"entertainment"}`)},
			`{"pattern":"spotify","count":0,"entries":[],"rule":{"id":4,"pattern":"spotify","category":"subscriptions"}}`, `{"pattern":"spotify"}`,
			"Change the rule for 'spotify' from subscriptions to entertainment? It matches 0 of your entries now; they keep their category.", ""},
		{"same rule again", Call{Tool: contracts.ToolSetRule, Args: json.RawMessage(`{"pattern":"spotify","category":"subscriptions"}`)},
			`{"pattern":"spotify","count":0,"entries":[],"rule":{"id":4,"pattern":"spotify","category":"subscriptions"}}`, `{"pattern":"spotify"}`,
			"", "Your rule already files entries matching 'spotify' under subscriptions."},
		{"delete shows the rule", Call{Tool: contracts.ToolDeleteRule, Args: json.RawMessage(`{"pattern":"spotify"}`)},
			`{"pattern":"spotify","count":2,"entries":[],"rule":{"id":4,"pattern":"spotify","category":"subscriptions"}}`, `{"pattern":"spotify"}`,
			"Delete the rule 'spotify' → subscriptions? Entries already filed keep their category.", ""},
		{"delete of no rule", Call{Tool: contracts.ToolDeleteRule, Args: json.RawMessage(`{"pattern":"netflix"}`)},
			`{"pattern":"netflix","count":1,"entries":[]}`, `{"pattern":"netflix"}`,
			"", "You have no rule for 'netflix', so there is nothing to delete."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, req := lookupOf(t, env, tt.give)
			if req.Tool != contracts.ToolMatchEntries || string(req.Args) != tt.wantLookup {
				t.Fatalf("lookup = %s %s, want match_entries %s", req.Tool, req.Args, tt.wantLookup)
			}
			got, eff := step(t, s, result(req.CallID, req.Tool, true, tt.giveData, ""), env)
			if tt.wantAnswer != "" {
				if a := only[contracts.Answer](t, eff, contracts.TypeAnswer); a.Content != tt.wantAnswer {
					t.Errorf("answer = %q, want %q", a.Content, tt.wantAnswer)
				}
				if len(got.Proposals) != 0 {
					t.Errorf("proposed anyway: %+v", got.Proposals)
				}
				return
			}
			if p := only[contracts.Proposal](t, eff, contracts.TypeProposal); p.Summary != tt.wantSummary {
				t.Errorf("summary = %q\nwant      %q", p.Summary, tt.wantSummary)
			}
		})
	}
}

// approveRecategorize runs a recategorize to its yes and its result, and
// returns the state and effects after the result.
func approveRecategorize(t *testing.T, env Env, decision string) (State, Effects) {
	t.Helper()
	s, req := lookupOf(t, env, Call{Tool: contracts.ToolRecategorize, Args: json.RawMessage(`{"pattern":"unity","category":"software"}`)})
	s, eff := step(t, s, result(req.CallID, req.Tool, true, unityMatches, ""), env)
	p := only[contracts.Proposal](t, eff, contracts.TypeProposal)
	s, eff = step(t, s, confirmTurn("t2", p.ProposalID, decision, ""), env)
	if decision == "reject" {
		return s, eff
	}
	run := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if run.Tool != contracts.ToolRecategorize || run.ProposalID != p.ProposalID {
		t.Fatalf("the yes ran %s (proposal %q)", run.Tool, run.ProposalID)
	}
	return step(t, s, result(run.CallID, run.Tool, true, `{"pattern":"unity","category":"software","changed":3}`, ""), env)
}

// After a recategorize is approved, the rule for next time is offered as
// a proposal of its own (looked up like any set_rule), not left to the
// model; a rejected recategorize offers nothing.
func TestRecategorizeOffersTheRuleForNextTime(t *testing.T) {
	env := testEnv(t0)
	s, eff := approveRecategorize(t, env, "approve")
	if eff.NeedModel {
		t.Fatal("the model was asked instead of the rule being offered")
	}
	if pr := eff.Outputs[0].Payload.(contracts.ToolProgress); pr.Summary != "Filed 3 entries matching 'unity' under software." {
		t.Errorf("progress = %q", pr.Summary)
	}
	look := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if look.Tool != contracts.ToolMatchEntries || string(look.Args) != `{"pattern":"unity"}` {
		t.Fatalf("follow-up lookup = %s %s", look.Tool, look.Args)
	}
	got, eff := step(t, s, result(look.CallID, look.Tool, true, `{"pattern":"unity","count":3,"entries":[]}`, ""), env)
	p := only[contracts.Proposal](t, eff, contracts.TypeProposal)
	if p.Tool != contracts.ToolSetRule || string(p.Args) != `{"pattern":"unity","category":"software"}` {
		t.Fatalf("follow-up proposal = %s %s", p.Tool, p.Args)
	}
	if want := "From now on, file entries matching 'unity' under software? It matches 3 of your entries now; they keep their category:\n- and 3 more"; p.Summary != want {
		t.Errorf("summary = %q, want %q", p.Summary, want)
	}
	if got.Turn != nil || len(got.Proposals) != 1 {
		t.Fatalf("turn %+v, proposals %+v: want the turn paused on the rule", got.Turn, got.Proposals)
	}

	// A rule that already says so is not offered again.
	_, eff = step(t, s, result(look.CallID, look.Tool, true, `{"pattern":"unity","count":3,"entries":[],"rule":{"id":1,"pattern":"unity","category":"software"}}`, ""), env)
	if a := only[contracts.Answer](t, eff, contracts.TypeAnswer); !strings.Contains(a.Content, "already files") || strings.Contains(types(eff), contracts.TypeProposal) {
		t.Errorf("existing rule: answer %q, outputs %q", a.Content, types(eff))
	}

	_, eff = approveRecategorize(t, env, "reject")
	if !eff.NeedModel || strings.Contains(types(eff), contracts.TypeToolRequest) {
		t.Errorf("a rejected recategorize went on to %q", types(eff))
	}
}
