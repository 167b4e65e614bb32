package llm_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/syncbuf"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator/llm"
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

// However many layers there are, an invalid output costs exactly one more
// model call: the json adapter does not retry content itself, and the
// orchestrator's one correction names the problem. Every rejection is
// logged with its reason, never with the key or the person's words.
func TestOneCorrectiveCallAcrossLayers(t *testing.T) {
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	srv := llmtest.New(t)
	m, _ := newModel(t, srv, func(c *llm.Config) { c.Protocol = llm.ProtocolJSON; c.Logger = log })
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1, Model: m, Log: log})
	ann := s.User("acme", "ann")

	// An exponent is not an amount: one correction, naming it, then the
	// model's number is read exactly.
	srv.Push(llmtest.JSON(`{"type":"tool_call","tool":"add_expense","args":{"item":"secret sauce","amount":1e308}}`),
		llmtest.JSON(`{"type":"tool_call","tool":"add_expense","args":{"item":"secret sauce","amount":200,"date":"2026-11-22"}}`))
	turn := ann.Say("add secret sauce 200 pounds today")
	p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, turn)
	if p.Summary != "Add expense 'secret sauce' £200.00 on 2026-11-22?" {
		t.Fatalf("summary = %q", p.Summary)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	msgs := reqs[1].Body["messages"].([]any)
	if last := msgs[len(msgs)-1].(map[string]any)["content"].(string); !strings.Contains(last, "amount: must be written out in digits, without an exponent") {
		t.Fatalf("the correction does not name the problem: %q", last)
	}

	// Invalid twice: exactly two calls, then a clear error.
	srv.Push(llmtest.JSON(`{"kind":"answer","content":"hi"}`), llmtest.JSON(`Sure! {"type":"answer"`))
	turn = ann.Say("what did I spend on secret sauce?")
	e := systest.Expect[contracts.TurnError](ann, contracts.TypeTurnError, turn)
	if e.Code != contracts.CodeModel {
		t.Fatalf("error = %+v", e)
	}
	s.Bus.Quiet(200 * time.Millisecond)
	if n := len(srv.Requests()); n != 4 {
		t.Fatalf("%d model calls in all, want 4 (two per turn)", n)
	}
	out := logs.String()
	for _, want := range []string{
		`msg="model output rejected; one corrective retry" reason="add_expense: amount: must be written out`,
		`msg="model output rejected; one corrective retry" reason="invalid model output: \"type\" must be one of`,
		`msg="model output rejected after its corrective retry; the turn ends" reason="invalid model output: the reply must be exactly one JSON object`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s\n%s", want, out)
		}
	}
	for _, secret := range []string{key, "secret sauce"} {
		if strings.Contains(out, secret) {
			t.Errorf("the log contains %q", secret)
		}
	}
}

// A plan made with the tools protocol's make_plan runs in the real
// orchestrator and toolrunner, step after step, and the model answers from
// both results.
func TestToolsProtocolPlanRuns(t *testing.T) {
	srv := llmtest.New(t)
	m, _ := newModel(t, srv, nil)
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1, Model: m})
	ann := s.User("acme", "ann")
	srv.Push(llmtest.ToolCalls(llmtest.Call{ID: "call_p", Name: "make_plan", Args: []string{
		`{"steps":[{"tool":"get_balance","args":{"range":"2026-Q1"},"save_as":"totals.q1"},`,
		`{"tool":"list_expenses","args":{"range":"since_2026-03-01"},"save_as":"lists.since_march"}]}`}}),
		llmtest.Text("Nothing spent in Q1 or since March."))
	turn := ann.Say("how much in Q1, and what since March?")
	ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, turn)
	if ans.Content != "Nothing spent in Q1 or since March." || len(ans.Citations) != 2 {
		t.Fatalf("answer = %+v", ans)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	var results []string
	for _, raw := range reqs[1].Body["messages"].([]any) {
		if mm := raw.(map[string]any); mm["role"] == "tool" {
			results = append(results, mm["content"].(string))
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], `"from":"2026-01-01"`) || !strings.Contains(results[1], `"from":"2026-03-01"`) {
		t.Fatalf("tool results the model saw: %q", results)
	}
}
