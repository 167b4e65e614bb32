package llm_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
)

// The adapter inside the real orchestrator and toolrunner, over real NATS:
// what the person sees is a proposal built by the server from the model's
// (split) arguments, the answer streamed token by token to their sockets,
// and an answer with the legacy "added" field; a cut stream costs one
// corrective retry, not the turn.
func TestConversationThroughTheOrchestrator(t *testing.T) {
	srv := llmtest.New(t)
	m, _ := newModel(t, srv, nil)
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1, Model: m})
	ann := s.User("acme", "ann")
	deliver := s.Watch("purser.deliver.acme.ann")

	cut := llmtest.Reply{Chunks: []string{llmtest.Content("Let me")}, Cut: true}
	srv.Push(cut, llmtest.ToolCalls(llmtest.Call{ID: "call_1", Name: "add_expense",
		Args: []string{`{"item":"electricity bill","am`, `ount":"200.00","currency":"GBP","da`, `te":"2026-11-22","category":null}`}}))
	turn := ann.Say("add my electricity bill, £200, today")
	p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, turn)
	if p.Summary != "Add expense 'electricity bill' £200.00 on 2026-11-22?" {
		t.Fatalf("summary = %q", p.Summary)
	}
	second := srv.Requests()[1].Body["messages"].([]any)
	if last := second[len(second)-1].(map[string]any)["content"].(string); !strings.Contains(last, "invalid") {
		t.Fatalf("the retry did not carry the correction: %q", last)
	}

	srv.Push(llmtest.Text("Added ", "your electricity ", "bill."))
	yes := ann.Confirm(p.ProposalID, "approve", nil)
	ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, yes)
	if ans.Content != "Added your electricity bill." || ans.Added == nil || ans.Added.Amount.Minor != 20000 {
		t.Fatalf("answer = %+v", ans)
	}
	// The model saw the tool's result as a tool message.
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Body["messages"].([]any)
	var sawResult bool
	for _, raw := range msgs {
		mm := raw.(map[string]any)
		if mm["role"] == "tool" && strings.Contains(mm["content"].(string), `"electricity bill"`) {
			sawResult = true
		}
	}
	if !sawResult {
		t.Fatalf("no tool result in the model's prompt: %v", msgs)
	}
	var tokens []string
	for _, m := range deliver.WaitN(3, func(m systest.Msg) bool { return strings.Contains(string(m.Data), `"type":"token"`) }) {
		var f contracts.ServerFrame
		if err := json.Unmarshal(m.Data, &f); err != nil || f.Token == nil {
			t.Fatalf("token frame %s: %v", m.Data, err)
		}
		if f.TurnID == yes {
			tokens = append(tokens, f.Token.Text)
		}
	}
	if strings.Join(tokens, "") != "Added your electricity bill." {
		t.Fatalf("streamed tokens = %q", tokens)
	}
	s.Bus.Quiet(200 * time.Millisecond)
	if srv.Pending() != 0 {
		t.Fatalf("%d scripted replies unused", srv.Pending())
	}
}
