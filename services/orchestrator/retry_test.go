package orchestrator

import (
	"encoding/json"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

func timedOut(callID, tool string) Event {
	return Event{Kind: EvToolResult, Result: &contracts.ToolResult{CallID: callID, Tool: tool, OK: false,
		Error: &contracts.ToolError{Code: contracts.CodeTimedOut, Message: "It took longer than its time limit, so it was stopped; nothing was changed. It can be tried again."}}}
}

// "try again" after a read that timed out runs the same read once more;
// after a change that timed out it proposes the same change anew; said
// later, or with nothing timed out, it is just text for the model.
func TestTryAgainAfterATimeout(t *testing.T) {
	env := testEnv(t0)
	read := Call{Tool: contracts.ToolGetBalance, Args: json.RawMessage(`{"range":"this_month"}`)}
	s, _ := step(t, State{}, textTurn("t1", "what did I spend this month?"), env)
	s, eff := step(t, s, calls(read), env)
	req := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	s, _ = step(t, s, timedOut(req.CallID, req.Tool), env)
	s, _ = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "That took too long; say 'try again'."}), env)

	s, eff = step(t, s, textTurn("t2", "try again"), env)
	again := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if again.Tool != req.Tool || string(again.Args) != string(req.Args) || again.CallID == req.CallID || eff.NeedModel {
		t.Fatalf("try again ran %s %s (call %s), want %s %s under a new call", again.Tool, again.Args, again.CallID, req.Tool, req.Args)
	}
	s, _ = step(t, s, result(again.CallID, again.Tool, true, `{"range":"this_month","from":"2026-11-01","to":"2026-11-30","total":[],"count":0}`, ""), env)
	s, _ = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "Nothing yet."}), env)
	if _, eff = step(t, s, textTurn("t3", "try again"), env); !eff.NeedModel || len(requests(eff)) != 0 {
		t.Fatalf("try again with nothing timed out: %q", types(eff))
	}

	// A change: approved, timed out, then proposed again.
	s, p := proposeAdd(t, env)
	s, eff = step(t, s, confirmTurn("t2", p.ProposalID, "approve", ""), env)
	req = only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	s, _ = step(t, s, timedOut(req.CallID, req.Tool), env)
	s, _ = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "It timed out."}), env)
	_, eff = step(t, s, textTurn("t3", "try again"), env)
	np := only[contracts.Proposal](t, eff, contracts.TypeProposal)
	if np.ProposalID == p.ProposalID || string(np.Args) != string(p.Args) || len(requests(eff)) != 0 {
		t.Fatalf("try again after a change = %+v with %q, want the same change proposed anew", np, types(eff))
	}
}
