package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/pkg/contracts"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func testEnv(now time.Time) Env {
	return Env{TenantID: "acme", ConversationID: "c1", Now: now, DefaultCurrency: "GBP", NeedsConfirm: func(tool string) bool {
		spec, _ := contracts.LookupTool(tool)
		return spec.Kind == contracts.KindMutation
	}}
}

func textTurn(id, text string) Event {
	return Event{Kind: EvTurn, Turn: &contracts.UserTurn{TurnID: id, TenantID: "acme", UserID: "ann", Roles: []string{"member"},
		ConversationID: "c1", Text: text, Timezone: "Europe/London", SentAt: t0}}
}

func confirmTurn(id, proposal, decision string, args string) Event {
	e := textTurn(id, "")
	e.Turn.Text = ""
	e.Turn.Confirm = &contracts.Confirm{ProposalID: proposal, Decision: decision}
	if args != "" {
		e.Turn.Confirm.Args = json.RawMessage(args)
	}
	return e
}

func decide(d Decision) Event { return Event{Kind: EvDecision, Decision: &d} }

func calls(cs ...Call) Event { return decide(Decision{Kind: DecisionToolCalls, Calls: cs}) }

func result(callID, tool string, ok bool, data string, errMsg string) Event {
	r := &contracts.ToolResult{CallID: callID, Tool: tool, OK: ok}
	if data != "" {
		r.Data = json.RawMessage(data)
	}
	if errMsg != "" {
		r.Error = &contracts.ToolError{Code: "x", Message: errMsg}
	}
	return Event{Kind: EvToolResult, Result: r}
}

// types lists the output types in order, e.g. "tool_progress tool_request".
func types(eff Effects) string {
	var out []string
	for _, o := range eff.Outputs {
		out = append(out, o.Type)
	}
	return strings.Join(out, " ")
}

func only[T any](t *testing.T, eff Effects, typ string) T {
	t.Helper()
	for _, o := range eff.Outputs {
		if o.Type == typ {
			return o.Payload.(T)
		}
	}
	t.Fatalf("no %s output in %q", typ, types(eff))
	var zero T
	return zero
}

func step(t *testing.T, s State, ev Event, env Env) (State, Effects) {
	t.Helper()
	next, eff := Transition(s, ev, env)
	// Purity: the same input on the same state gives the same result.
	again, eff2 := Transition(s, ev, env)
	if diff := cmp.Diff(next, again); diff != "" {
		t.Fatalf("Transition is not deterministic (-first +second):\n%s", diff)
	}
	if types(eff) != types(eff2) {
		t.Fatalf("outputs differ between two runs: %q vs %q", types(eff), types(eff2))
	}
	for i := range eff.Outputs {
		if eff.Outputs[i].ID != eff2.Outputs[i].ID {
			t.Fatalf("output ids are not derived from the input: %s vs %s", eff.Outputs[i].ID, eff2.Outputs[i].ID)
		}
	}
	return next, eff
}

func addCall(item, amount string) Call {
	return Call{Tool: contracts.ToolAddExpense, Args: json.RawMessage(`{"item":"` + item + `","amount":"` + amount + `"}`)}
}

func TestTextTurnAndRedelivery(t *testing.T) {
	env := testEnv(t0)
	s, eff := step(t, State{}, textTurn("t1", "hello"), env)
	if !eff.NeedModel || s.Turn == nil || s.Turn.TurnID != "t1" || len(eff.Outputs) != 0 {
		t.Fatalf("a new turn must ask the model and emit nothing yet: %+v", eff)
	}
	s, eff = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "Hi!"}), env)
	a := only[contracts.Answer](t, eff, contracts.TypeAnswer)
	if a.Content != "Hi!" || a.TurnID != "t1" || s.Turn != nil || eff.Stream != "Hi!" {
		t.Fatalf("answer = %+v, turn %+v", a, s.Turn)
	}
	// The same turn again changes nothing.
	again, eff := step(t, s, textTurn("t1", "hello"), env)
	if len(eff.Outputs) != 0 || eff.NeedModel {
		t.Fatalf("redelivered turn produced %q", types(eff))
	}
	if diff := cmp.Diff(s, again); diff != "" {
		t.Fatalf("redelivered turn changed state:\n%s", diff)
	}
}

func TestClarifyRunsNothing(t *testing.T) {
	env := testEnv(t0)
	s, _ := step(t, State{}, textTurn("t1", "I want to add an item"), env)
	s, eff := step(t, s, decide(Decision{Kind: DecisionClarify, Question: "What item?"}), env)
	if types(eff) != contracts.TypeClarify || s.Turn != nil {
		t.Fatalf("clarify emitted %q", types(eff))
	}
	// ask_clarification through native tool calling is the same.
	s, _ = step(t, s, textTurn("t2", "add something"), env)
	_, eff = step(t, s, calls(Call{Tool: contracts.ToolAskClarification, Args: json.RawMessage(`{"question":"How much?"}`)}), env)
	if c := only[contracts.Clarify](t, eff, contracts.TypeClarify); c.Question != "How much?" {
		t.Fatalf("clarify = %+v", c)
	}
}

func TestReadsRunInParallelThenModelAgain(t *testing.T) {
	env := testEnv(t0)
	s, _ := step(t, State{}, textTurn("t1", "balance and list"), env)
	s, eff := step(t, s, calls(
		Call{Tool: contracts.ToolGetBalance, Args: json.RawMessage(`{"range":"this_month"}`)},
		Call{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)},
	), env)
	if types(eff) != "tool_progress tool_request tool_progress tool_request" || len(s.Turn.Open) != 2 {
		t.Fatalf("outputs %q, open %d", types(eff), len(s.Turn.Open))
	}
	var reqs []contracts.ToolRequest
	for _, o := range eff.Outputs {
		if r, ok := o.Payload.(contracts.ToolRequest); ok {
			reqs = append(reqs, r)
		}
	}
	if reqs[0].CallID == reqs[1].CallID || reqs[0].TenantID != "acme" || reqs[0].UserID != "ann" || reqs[0].ProposalID != "" {
		t.Fatalf("requests = %+v", reqs)
	}
	s, eff = step(t, s, result(reqs[0].CallID, contracts.ToolGetBalance, true, `{"range":"this_month","from":"2026-11-01","to":"2026-11-30","total":[{"minor":500,"currency":"GBP"}],"count":1}`, ""), env)
	if eff.NeedModel || len(s.Turn.Open) != 1 {
		t.Fatal("asked the model before every parallel read finished")
	}
	// The same result again is ignored.
	if _, dup := step(t, s, result(reqs[0].CallID, contracts.ToolGetBalance, true, `{}`, ""), env); len(dup.Outputs) != 0 || dup.NeedModel {
		t.Fatalf("duplicate result produced %q", types(dup))
	}
	s, eff = step(t, s, result(reqs[1].CallID, contracts.ToolListExpenses, true, `{"range":"this_month","from":"2026-11-01","to":"2026-11-30","expenses":[],"totals":[]}`, ""), env)
	if !eff.NeedModel || s.Memory["entities.balance"] == nil || s.Memory["params.range"] == nil {
		t.Fatalf("after all results: need model %v, memory %v", eff.NeedModel, s.Memory)
	}
	_, eff = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "You spent £5.00."}), env)
	a := only[contracts.Answer](t, eff, contracts.TypeAnswer)
	if a.Balance == nil || a.Balance.Total[0].Minor != 500 || len(a.Citations) != 2 {
		t.Fatalf("legacy balance field missing: %+v", a)
	}
}

// proposeAdd runs a turn to the point where add_expense waits for a yes.
func proposeAdd(t *testing.T, env Env) (State, contracts.Proposal) {
	t.Helper()
	s, _ := step(t, State{}, textTurn("t1", "electricity bill £200"), env)
	s, eff := step(t, s, calls(addCall("electricity bill", "200")), env)
	if types(eff) != contracts.TypeProposal || s.Turn != nil || len(s.Proposals) != 1 || len(eff.NewProposals) != 1 {
		t.Fatalf("mutation did not become one proposal: %q, %+v", types(eff), s.Proposals)
	}
	p := only[contracts.Proposal](t, eff, contracts.TypeProposal)
	if p.Summary != "Add expense 'electricity bill' £200.00 on 2026-11-22?" {
		t.Errorf("summary = %q", p.Summary)
	}
	if string(p.Args) != `{"item":"electricity bill","amount":"200","currency":"GBP","date":"2026-11-22"}` {
		t.Errorf("canonical args = %s", p.Args)
	}
	return s, p
}

func TestApproveRunsTheProposalOnce(t *testing.T) {
	env := testEnv(t0)
	s, p := proposeAdd(t, env)
	s, eff := step(t, s, confirmTurn("t2", p.ProposalID, "approve", ""), env)
	req := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if req.ProposalID != p.ProposalID || string(req.Args) != string(p.Args) || req.Tool != contracts.ToolAddExpense {
		t.Fatalf("approve ran %+v, want exactly the proposal", req)
	}
	if diff := cmp.Diff([]ProposalChange{{p.ProposalID, "pending", "approved"}}, eff.Changes); diff != "" {
		t.Errorf("changes:\n%s", diff)
	}
	// A second approve (a double click with its own id) runs nothing.
	s2, eff2 := step(t, s, confirmTurn("t3", p.ProposalID, "approve", ""), env)
	if strings.Contains(types(eff2), contracts.TypeToolRequest) {
		t.Fatalf("second approve ran the tool again: %q", types(eff2))
	}
	_ = s2
	// The result arrives; the model answers; the legacy added field is set.
	s, eff = step(t, s, result(req.CallID, contracts.ToolAddExpense, true, `{"expense":{"id":4,"item":"electricity bill","amount":{"minor":20000,"currency":"GBP"},"date":"2026-11-22"}}`, ""), env)
	if !eff.NeedModel {
		t.Fatal("model not asked after the mutation result")
	}
	_, eff = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "Added."}), env)
	if a := only[contracts.Answer](t, eff, contracts.TypeAnswer); a.Added == nil || a.Added.ID != 4 {
		t.Fatalf("answer = %+v", a)
	}
}

func TestQueuedConfirmWhileToolsRun(t *testing.T) {
	env := testEnv(t0)
	s, p := proposeAdd(t, env)
	s, eff := step(t, s, confirmTurn("t2", p.ProposalID, "approve", ""), env)
	req := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	// A double click arriving while the tool runs waits its turn, then is
	// refused: the proposal is no longer pending.
	s, eff = step(t, s, confirmTurn("t3", p.ProposalID, "approve", ""), env)
	if len(eff.Outputs) != 0 || len(s.Queue) != 1 {
		t.Fatalf("turn mid-tool: outputs %q, queue %d", types(eff), len(s.Queue))
	}
	s, _ = step(t, s, result(req.CallID, contracts.ToolAddExpense, true, `{"expense":{"id":1,"item":"x","amount":{"minor":1,"currency":"GBP"},"date":"2026-11-22"}}`, ""), env)
	s, eff = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "Added."}), env)
	if types(eff) != "answer turn_error" || len(s.Queue) != 0 {
		t.Fatalf("after the answer the queued confirm must be refused: %q", types(eff))
	}
	if te := eff.Outputs[1].Payload.(contracts.TurnError); te.TurnID != "t3" || te.Code != contracts.CodeProposalInvalid {
		t.Fatalf("turn error = %+v", te)
	}
}

func TestRejectReachesTheModelAsADecision(t *testing.T) {
	env := testEnv(t0)
	s, p := proposeAdd(t, env)
	s, eff := step(t, s, confirmTurn("t2", p.ProposalID, "reject", ""), env)
	if !eff.NeedModel || strings.Contains(types(eff), contracts.TypeToolRequest) {
		t.Fatalf("reject: %q need model %v", types(eff), eff.NeedModel)
	}
	pr := PromptFor(s, env)
	if len(pr.Steps) != 1 || pr.Steps[0].Decision != "rejected" || pr.Steps[0].Error != "" || pr.Failure != "" {
		t.Fatalf("the model must see a decision, not a tool error: %+v", pr.Steps)
	}
	if got := DescribeStepIn("en", pr.Steps[0]); got != "OK, I won't add that expense. "+AskWhatToChange {
		t.Fatalf("answer to a reject = %q", got)
	}
	// "no" typed as text is the same decision.
	s2, _ := proposeAdd(t, env)
	s2, eff = step(t, s2, textTurn("t2", "no"), env)
	if len(eff.Changes) != 1 || eff.Changes[0].To != "rejected" || s2.Turn.Steps[0].Decision != "rejected" {
		t.Fatalf("typed no: %+v", eff.Changes)
	}
}

func TestEditRunsANewRevisionOfTheSameTool(t *testing.T) {
	env := testEnv(t0)
	s, p := proposeAdd(t, env)
	s, eff := step(t, s, confirmTurn("t2", p.ProposalID, "edit", `{"item":"electricity bill","amount":"180"}`), env)
	req := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if req.Tool != contracts.ToolAddExpense || req.ProposalID == p.ProposalID || !strings.Contains(string(req.Args), `"amount":"180"`) {
		t.Fatalf("edit ran %+v", req)
	}
	if len(eff.NewProposals) != 1 || eff.NewProposals[0].Revision != 2 || eff.Approved[0] != req.ProposalID {
		t.Fatalf("new revision = %+v", eff.NewProposals)
	}
	if s.Turn.Open[0].Decision != "edited" {
		t.Fatal("the model will not be told the user edited the args")
	}
	// Invalid edited args: a clear error and the proposal still waits.
	s2, p2 := proposeAdd(t, env)
	s2, eff = step(t, s2, confirmTurn("t2", p2.ProposalID, "edit", `{"item":"x","amount":"-5","tool":"delete_expense"}`), env)
	if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Code != contracts.CodeInvalidArgs {
		t.Fatalf("turn error = %+v", te)
	}
	if len(s2.Proposals) != 1 || strings.Contains(types(eff), contracts.TypeToolRequest) {
		t.Fatal("an invalid edit changed something")
	}
}

func TestExpiredAndForeignProposals(t *testing.T) {
	env := testEnv(t0)
	s, p := proposeAdd(t, env)
	late := testEnv(t0.Add(ProposalTTL + time.Minute))
	s, eff := step(t, s, confirmTurn("t2", p.ProposalID, "approve", ""), late)
	if q := only[contracts.Clarify](t, eff, contracts.TypeClarify); !strings.Contains(q.Question, "expired") || strings.Contains(q.Question, "declin") {
		t.Fatalf("expired approve = %q, want it to say it expired", q.Question)
	}
	if len(eff.Changes) != 1 || eff.Changes[0].To != "expired" || len(s.Proposals) != 0 || strings.Contains(types(eff), contracts.TypeToolRequest) {
		t.Fatalf("expiry not recorded, or something ran: %+v %q", eff.Changes, types(eff))
	}
	_, eff = step(t, s, confirmTurn("t3", "psomeoneelse", "approve", ""), env)
	if types(eff) != contracts.TypeTurnError {
		t.Fatalf("foreign proposal id: %q", types(eff))
	}
}

func TestSeveralMutationsGetOneProposalEach(t *testing.T) {
	env := testEnv(t0)
	s, _ := step(t, State{}, textTurn("t1", "add two"), env)
	s, eff := step(t, s, calls(addCall("tea", "2"), addCall("cake", "3.5")), env)
	if types(eff) != "proposal proposal" || len(s.Proposals) != 2 || s.Proposals[0].ID == s.Proposals[1].ID {
		t.Fatalf("outputs %q proposals %+v", types(eff), s.Proposals)
	}
}

func TestBounds(t *testing.T) {
	env := testEnv(t0)
	t.Run("too many steps", func(t *testing.T) {
		s, _ := step(t, State{}, textTurn("t1", "x"), env)
		var cs []Call
		for range MaxSteps + 1 {
			cs = append(cs, Call{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)})
		}
		s, eff := step(t, s, calls(cs...), env)
		if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Code != contracts.CodeLimit || s.Turn != nil {
			t.Fatalf("got %+v", te)
		}
	})
	t.Run("one corrective retry", func(t *testing.T) {
		s, _ := step(t, State{}, textTurn("t1", "x"), env)
		bad := calls(Call{Tool: "drop_tables", Args: json.RawMessage(`{}`)})
		s, eff := step(t, s, bad, env)
		if !eff.NeedModel || len(eff.Outputs) != 0 || !strings.Contains(PromptFor(s, env).Correction, "drop_tables") {
			t.Fatalf("first invalid output must be retried with a correction: %+v", eff)
		}
		s, eff = step(t, s, calls(Call{Tool: contracts.ToolAddExpense, Args: json.RawMessage(`{"item":"x"}`)}), env)
		if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Code != contracts.CodeModel || s.Turn != nil {
			t.Fatalf("second invalid output: %+v", te)
		}
	})
	t.Run("one re-plan after a failed step", func(t *testing.T) {
		s, _ := step(t, State{}, textTurn("t1", "x"), env)
		s, eff := step(t, s, calls(Call{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)}), env)
		req := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
		s, eff = step(t, s, result(req.CallID, req.Tool, false, "", "store unavailable"), env)
		if !eff.NeedModel || PromptFor(s, env).Failure != "store unavailable" {
			t.Fatalf("failure not shown to the model: %+v", PromptFor(s, env))
		}
		s, eff = step(t, s, calls(Call{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)}), env)
		req = only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
		s, eff = step(t, s, result(req.CallID, req.Tool, false, "", "store unavailable"), env)
		if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); !strings.Contains(te.Message, "store unavailable") || s.Turn != nil {
			t.Fatalf("second failure: %+v", te)
		}
	})
	t.Run("silent model after results", func(t *testing.T) {
		s, _ := step(t, State{}, textTurn("t1", "what did I spend"), env)
		s, eff := step(t, s, calls(Call{Tool: contracts.ToolGetBalance, Args: json.RawMessage(`{}`)}), env)
		req := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
		s, _ = step(t, s, result(req.CallID, req.Tool, true, `{"range":"this_month","from":"2026-11-01","to":"2026-11-30","total":[{"minor":1250,"currency":"GBP"}],"count":2}`, ""), env)
		_, eff = step(t, s, decide(Decision{Kind: DecisionAnswer}), env)
		if a := only[contracts.Answer](t, eff, contracts.TypeAnswer); a.Content != "You spent £12.50 this month across 2 expenses." {
			t.Fatalf("fallback answer = %q", a.Content)
		}
	})
	t.Run("model unavailable", func(t *testing.T) {
		s, _ := step(t, State{}, textTurn("t1", "x"), env)
		_, eff := step(t, s, Event{Kind: EvDecision, ModelErr: "timeout"}, env)
		if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Code != contracts.CodeModel {
			t.Fatalf("got %+v", te)
		}
	})
	t.Run("unreadable model output gets one correction", func(t *testing.T) {
		s, _ := step(t, State{}, textTurn("t1", "x"), env)
		s, eff := step(t, s, Event{Kind: EvDecision, ModelInvalid: "the stream ended mid tool call"}, env)
		if !eff.NeedModel || len(eff.Outputs) != 0 || !strings.Contains(PromptFor(s, env).Correction, "the stream ended mid tool call") {
			t.Fatalf("first invalid output: need model %v, outputs %q, correction %q", eff.NeedModel, types(eff), PromptFor(s, env).Correction)
		}
		_, eff = step(t, s, Event{Kind: EvDecision, ModelInvalid: "bad JSON"}, env)
		if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Code != contracts.CodeModel {
			t.Fatalf("second invalid output: %+v", te)
		}
	})
	t.Run("wall clock", func(t *testing.T) {
		s, _ := step(t, State{}, textTurn("t1", "x"), env)
		s, _ = step(t, s, calls(Call{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)}), env)
		_, eff := step(t, s, Event{Kind: EvTimeout}, testEnv(t0.Add(TurnBudget+time.Second)))
		if te := only[contracts.TurnError](t, eff, contracts.TypeTurnError); te.Code != contracts.CodeTimeout {
			t.Fatalf("got %+v", te)
		}
		// A new turn after the budget ends the stuck one and goes ahead.
		s2, eff := step(t, s, textTurn("t2", "hello"), testEnv(t0.Add(TurnBudget+time.Second)))
		if !eff.NeedModel || s2.Turn.TurnID != "t2" || !strings.Contains(types(eff), contracts.TypeTurnError) {
			t.Fatalf("stuck turn not ended: %q", types(eff))
		}
	})
}

func TestEndedTurnsReportTheirSteps(t *testing.T) {
	env := testEnv(t0)
	s, _ := step(t, State{}, textTurn("t1", "x"), env)
	s, eff := step(t, s, calls(Call{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)}), env)
	if len(eff.EndedSteps) != 0 {
		t.Fatalf("a running turn reported ended: %v", eff.EndedSteps)
	}
	var callID string
	for _, o := range eff.Outputs {
		if r, ok := o.Payload.(contracts.ToolRequest); ok {
			callID = r.CallID
		}
	}
	s, _ = step(t, s, result(callID, contracts.ToolListExpenses, true, `{"expenses":[]}`, ""), env)
	_, eff = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "Nothing yet."}), env)
	if len(eff.EndedSteps) != 1 || eff.EndedSteps[0] != 1 {
		t.Fatalf("ended steps = %v, want [1]", eff.EndedSteps)
	}
}

func TestPlanWithVarsAndStop(t *testing.T) {
	env := testEnv(t0)
	plan := &Plan{Steps: []PlanStep{
		{Tool: contracts.ToolSearchGmail, Args: json.RawMessage(`{"query":"visa statement"}`), SaveAs: "lists.found"},
		{Tool: contracts.ToolFetchEmailAttachments, Args: json.RawMessage(`{"message_id":{"$var":"ids.message_id"}}`)},
	}, StopWhen: &StopCondition{Var: "lists.messages", Empty: true}}
	start, _ := step(t, State{}, textTurn("t1", "find my visa statement and import it"), env)
	s, eff := step(t, start, decide(Decision{Kind: DecisionPlan, Plan: plan}), env)
	req := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if req.Tool != contracts.ToolSearchGmail {
		t.Fatalf("first step = %s", req.Tool)
	}
	found := `{"messages":[{"id":"m42","from":"Visa <statements@visa.example>","subject":"Your statement","date":"2026-11-01T08:00:00Z","attachments":["nov.csv"],"score":0.9}]}`
	s1, eff := step(t, s, result(req.CallID, req.Tool, true, found, ""), env)
	// The import is looked up first: what it would add.
	look := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if look.Tool != contracts.ToolPreviewImport || string(look.Args) != `{"message_id":"m42"}` {
		t.Fatalf("lookup = %s %s", look.Tool, look.Args)
	}
	preview := `{"message_id":"m42","subject":"Your statement","from":"Visa <statements@visa.example>","files":[{"filename":"nov.csv","summary":"nov.csv: 2 transactions; 2 new, 0 already in your ledger","readable":true,"new":2,"already":0}]}`
	s1, eff = step(t, s1, result(look.CallID, look.Tool, true, preview, ""), env)
	p := only[contracts.Proposal](t, eff, contracts.TypeProposal)
	if string(p.Args) != `{"message_id":"m42"}` || s1.Memory["lists.found"] == nil {
		t.Fatalf("bound args = %s", p.Args)
	}
	if p.Summary != `Import nov.csv from "Your statement", sent by Visa \<statements@visa.example\>? nov.csv: 2 transactions; 2 new, 0 already in your ledger.` {
		t.Errorf("summary = %q", p.Summary)
	}
	// Nothing found: the stop condition holds and the model answers.
	_, eff = step(t, s, result(req.CallID, req.Tool, true, `{"messages":[]}`, ""), env)
	if !eff.NeedModel || len(eff.NewProposals) != 0 {
		t.Fatalf("plan did not stop on an empty search: %+v", eff)
	}
}

// A plan that reaches a change waits for the yes, then carries on with its
// next step; a no ends the plan and hands back to the model.
func TestPlanCarriesOnAfterTheYes(t *testing.T) {
	env := testEnv(t0)
	plan := &Plan{Steps: []PlanStep{
		{Tool: contracts.ToolAddExpense, Args: json.RawMessage(`{"item":"tea","amount":"3","currency":"GBP","date":"2026-11-22"}`), SaveAs: "entities.added"},
		{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{"range":"this_month"}`)},
	}}
	start, _ := step(t, State{}, textTurn("t1", "add tea and show my month"), env)
	waiting, eff := step(t, start, decide(Decision{Kind: DecisionPlan, Plan: plan}), env)
	p := only[contracts.Proposal](t, eff, contracts.TypeProposal)

	approved, eff := step(t, waiting, confirmTurn("t2", p.ProposalID, "approve", ""), env)
	add := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if add.Tool != contracts.ToolAddExpense || add.ProposalID != p.ProposalID {
		t.Fatalf("after the yes ran %+v", add)
	}
	next, eff := step(t, approved, result(add.CallID, add.Tool, true, `{"expense":{"id":7,"item":"tea","amount":{"minor":300,"currency":"GBP"},"date":"2026-11-22"}}`, ""), env)
	list := only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest)
	if list.Tool != contracts.ToolListExpenses || eff.NeedModel {
		t.Fatalf("the plan did not carry on after the change: %+v (need model %v)", list, eff.NeedModel)
	}
	if next.Memory["entities.added"] == nil {
		t.Errorf("the change's result was not kept as the plan asked")
	}

	// No: the plan ends, and the model hears the decision.
	_, eff = step(t, waiting, confirmTurn("t3", p.ProposalID, "reject", ""), env)
	for _, o := range eff.Outputs {
		if o.Type == contracts.TypeToolRequest {
			t.Fatalf("after a no the plan ran %+v", o.Payload)
		}
	}
	if !eff.NeedModel {
		t.Fatal("after a no the model was not asked")
	}
}

// A turn that ends because a tool stayed rate limited says, in its error,
// when to ask again: the tool's own retry_after, not a number in prose.
func TestTurnEndedByARateLimitSaysWhenToRetry(t *testing.T) {
	env := testEnv(t0)
	limited := func(callID string) Event {
		return Event{Kind: EvToolResult, Result: &contracts.ToolResult{CallID: callID, Tool: contracts.ToolListExpenses,
			Error: &contracts.ToolError{Code: contracts.CodeRateLimited, Message: "Too many list_expenses calls.", RetryAfter: 17}}}
	}
	list := Call{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)}
	s, _ := step(t, State{}, textTurn("t1", "show my expenses"), env)
	s, eff := step(t, s, calls(list), env)
	s, eff = step(t, s, limited(only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest).CallID), env)
	if !eff.NeedModel {
		t.Fatal("the first limited step did not go back to the model")
	}
	s, eff = step(t, s, calls(list), env)
	_, eff = step(t, s, limited(only[contracts.ToolRequest](t, eff, contracts.TypeToolRequest).CallID), env)
	te := only[contracts.TurnError](t, eff, contracts.TypeTurnError)
	if te.RetryAfter != 17 {
		t.Fatalf("turn error = %+v, want retry after 17 s", te)
	}
}

// The prompt carries the open exchange, not a slice of old messages: an
// answered question long ago is the model's to look up with
// get_chat_history; a reply to a clarifying question keeps the question
// and the request it asked about.
func TestPromptCarriesOnlyTheOpenExchange(t *testing.T) {
	env := testEnv(t0)
	s := State{}
	for i := range 5 {
		id := "old" + string(rune('a'+i))
		s, _ = step(t, s, textTurn(id, "how much did I spend on coffee"), env)
		s, _ = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "You spent 4.50 on coffee."}), env)
	}
	s, _ = step(t, s, textTurn("t1", "add lunch"), env)
	s, _ = step(t, s, decide(Decision{Kind: DecisionClarify, Question: "How much was lunch?"}), env)
	s, _ = step(t, s, textTurn("t2", "12.50"), env)
	pr := PromptFor(s, env)
	var got []string
	for _, e := range pr.History {
		got = append(got, e.Role+": "+e.Text)
	}
	if diff := cmp.Diff([]string{"user: add lunch", "assistant: How much was lunch?"}, got); diff != "" {
		t.Fatalf("history in the prompt (-want +got):\n%s", diff)
	}
	if !pr.Earlier {
		t.Fatal("the prompt does not say that earlier messages exist")
	}
	// A fresh request after an answer carries only the last exchange.
	s, _ = step(t, s, decide(Decision{Kind: DecisionAnswer, Content: "Added."}), env)
	s, _ = step(t, s, textTurn("t3", "what about yesterday"), env)
	got = nil
	for _, e := range PromptFor(s, env).History {
		got = append(got, e.Role+": "+e.Text)
	}
	if diff := cmp.Diff([]string{"user: add lunch", "assistant: How much was lunch?", "user: 12.50", "assistant: Added."}, got); diff != "" {
		t.Fatalf("history after the clarified request was answered (-want +got):\n%s", diff)
	}
	if len(s.History) > maxHistory {
		t.Fatalf("state keeps %d history entries, more than %d", len(s.History), maxHistory)
	}
}

// TestProposalsWaitADayUnlessConfigured: a proposal says when it
// expires: a day after it was made by default, or as configured.
func TestProposalsWaitADayUnlessConfigured(t *testing.T) {
	env := testEnv(t0)
	_, p := proposeAdd(t, env)
	if !p.ExpiresAt.Equal(t0.Add(24 * time.Hour)) {
		t.Fatalf("expires at %v, want a day after %v", p.ExpiresAt, t0)
	}
	env.ProposalTTL = time.Hour
	_, p = proposeAdd(t, env)
	if !p.ExpiresAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("configured: expires at %v", p.ExpiresAt)
	}
}
