package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// now is fixed so that every call of a test falls in one rate-limit minute.
var now = time.Date(2026, 11, 22, 10, 0, 5, 0, time.UTC)

func clock() time.Time { return now }

func eachEngine(t *testing.T, opts systest.Options, fn func(t *testing.T, s *systest.System)) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			o := opts
			o.DSN = e.DSN(t)
			o.Now = clock
			if o.Toolrunners == 0 {
				o.Toolrunners = 1
			}
			fn(t, systest.Start(t, o))
		})
	}
}

func request(tenant, user, callID, tool, args string, roles ...string) contracts.ToolRequest {
	if len(roles) == 0 {
		roles = []string{"member"}
	}
	return contracts.ToolRequest{CallID: callID, TurnID: "turn-" + callID, TenantID: tenant, UserID: user, Roles: roles,
		ConversationID: "conv-" + user, Tool: tool, Args: json.RawMessage(args), Timezone: "Europe/London", Deadline: now.Add(time.Minute)}
}

// approved stores a proposal for req as the orchestrator would after a yes.
func approved(t *testing.T, s *systest.System, req *contracts.ToolRequest, id string) {
	t.Helper()
	req.ProposalID = id
	err := s.Store.CreateProposal(context.Background(), store.Proposal{ID: id, TenantID: req.TenantID, UserID: req.UserID,
		ConversationID: req.ConversationID, TurnID: req.TurnID, Tool: req.Tool, Args: req.Args, Summary: "test", Status: store.ProposalApproved,
		Revision: 1, ExpiresAt: now.Add(15 * time.Minute), CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
}

func rows(t *testing.T, s *systest.System, tenant string) []store.Expense {
	t.Helper()
	out, err := s.Store.ListExpenses(context.Background(), store.ExpenseFilter{TenantID: tenant, AllUsers: true})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func audit(t *testing.T, s *systest.System, tenant string) map[string]store.AuditEntry {
	t.Helper()
	entries, err := s.Store.ListAudit(context.Background(), tenant, 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.AuditEntry{}
	for _, e := range entries {
		out[e.CallID] = e
	}
	return out
}

const addArgs = `{"item":"electricity bill","amount":"200.00","currency":"GBP","date":"2026-11-22"}`

func TestMutationNeedsAnApprovedProposal(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		s.SendToolRequest(request("acme", "ann", "c1", contracts.ToolAddExpense, addArgs))
		res := s.Result("acme", "conv-ann", "c1")
		if res.OK || res.Error == nil || res.Error.Code != contracts.CodeNotConfirmed {
			t.Fatalf("unconfirmed add = %+v", res)
		}
		// A pending (not yet approved) proposal is no better.
		req := request("acme", "ann", "c2", contracts.ToolAddExpense, addArgs)
		approved(t, s, &req, "p-pending")
		if err := s.Store.TransitionProposal(context.Background(), "acme", "p-pending", "approved", "pending", now); err != nil {
			t.Fatal(err)
		}
		s.SendToolRequest(req)
		if res := s.Result("acme", "conv-ann", "c2"); res.OK {
			t.Fatal("a pending proposal ran")
		}
		// Nor a proposal whose stored args differ from the request's.
		req = request("acme", "ann", "c3", contracts.ToolAddExpense, `{"item":"electricity bill","amount":"2000.00","currency":"GBP","date":"2026-11-22"}`)
		approved(t, s, &req, "p-other")
		req.Args = json.RawMessage(addArgs)
		req.CallID = "c3b"
		s.SendToolRequest(req)
		if res := s.Result("acme", "conv-ann", "c3b"); res.OK || res.Error.Code != contracts.CodeNotConfirmed {
			t.Fatalf("args differing from the proposal's = %+v", res)
		}
		if n := len(rows(t, s, "acme")); n != 0 {
			t.Fatalf("%d expenses written without approval", n)
		}
		a := audit(t, s, "acme")
		if a["c1"].Outcome != contracts.CodeNotConfirmed || a["c1"].Tool != contracts.ToolAddExpense || a["c1"].UserID != "ann" {
			t.Fatalf("refusal audit = %+v", a["c1"])
		}
	})
}

func TestRedeliveryAndDoubleConfirmWriteOnce(t *testing.T) {
	eachEngine(t, systest.Options{Toolrunners: 2}, func(t *testing.T, s *systest.System) {
		// Every publish of c1's result, duplicates included (the watch
		// keeps one per message id).
		c1Results := make(chan []byte, 8)
		sub, err := s.NC.Subscribe("purser.tool.result.acme.conv-ann", func(m *nats.Msg) {
			if strings.Contains(string(m.Data), `"call_id":"c1"`) {
				c1Results <- m.Data
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		req := request("acme", "ann", "c1", contracts.ToolAddExpense, addArgs)
		approved(t, s, &req, "p1")
		s.SendToolRequest(req)
		first := s.Result("acme", "conv-ann", "c1")
		if !first.OK {
			t.Fatalf("approved add failed: %+v", first.Error)
		}
		// The same request again (a replay past JetStream's duplicate
		// window, so under another message id) gets the stored result; a
		// second call id for the same proposal (a doubled confirm) is
		// refused.
		replay, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Pub.Publish("purser.tool.request."+req.Tool, bus.NewMessage("replay-c1", replay, bus.Headers{Type: contracts.TypeToolRequest,
			Tenant: req.TenantID, User: req.UserID, Conversation: req.ConversationID, Correlation: req.TurnID})); err != nil {
			t.Fatal(err)
		}
		dup := req
		dup.CallID = "c2"
		s.SendToolRequest(dup)
		second := s.Result("acme", "conv-ann", "c2")
		if second.OK || second.Error.Code != contracts.CodeProposalInvalid {
			t.Fatalf("second call for one proposal = %+v", second)
		}
		var results [][]byte
		for len(results) < 2 {
			select {
			case b := <-c1Results:
				results = append(results, b)
			case <-time.After(30 * time.Second):
				t.Fatalf("saw %d results of c1, want the first and the replay's", len(results))
			}
		}
		if string(results[1]) != string(results[0]) {
			t.Fatalf("replayed result differs:\n%s\n%s", results[0], results[1])
		}
		if got := rows(t, s, "acme"); len(got) != 1 || got[0].AmountMinor != 20000 {
			t.Fatalf("expenses = %+v, want exactly one", got)
		}
		p, err := s.Store.GetProposal(context.Background(), "acme", "p1")
		if err != nil || p.Status != store.ProposalExecuted {
			t.Fatalf("proposal after execution = %+v, %v", p, err)
		}
		// One audit entry a call, written with its result: the change as
		// it ran (not the replay), and the refused second confirm.
		a := audit(t, s, "acme")
		if len(a) != 2 || a["c1"].Outcome != "ok" || a["c1"].Tool != contracts.ToolAddExpense || a["c2"].Outcome != contracts.CodeProposalInvalid {
			t.Fatalf("audit = %+v, want c1 ok and c2 %s", a, contracts.CodeProposalInvalid)
		}
	})
}

func TestViewerCannotMutate(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		req := request("acme", "vic", "c1", contracts.ToolAddExpense, addArgs, "viewer")
		approved(t, s, &req, "p1")
		s.SendToolRequest(req)
		res := s.Result("acme", "conv-vic", "c1")
		if res.OK || res.Error.Code != contracts.CodeForbidden {
			t.Fatalf("viewer add = %+v", res)
		}
		read := request("acme", "vic", "c2", contracts.ToolListExpenses, `{"range":"this_month"}`, "viewer")
		s.SendToolRequest(read)
		if res := s.Result("acme", "conv-vic", "c2"); !res.OK {
			t.Fatalf("viewer read refused: %+v", res.Error)
		}
		if n := len(rows(t, s, "acme")); n != 0 {
			t.Fatalf("viewer wrote %d rows", n)
		}
		if a := audit(t, s, "acme"); a["c1"].Outcome != contracts.CodeForbidden {
			t.Fatalf("audit = %+v", a["c1"])
		}
	})
}

// Tenant A's requests never read or change tenant B's rows, whatever ids
// the arguments carry.
func TestTenantsAreIsolated(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		b, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "bravo", UserID: "bob", Item: "secret", AmountMinor: 999, Currency: "GBP", Date: "2026-11-20"})
		if err != nil {
			t.Fatal(err)
		}
		upd := request("alpha", "ann", "c1", contracts.ToolUpdateExpense, fmt.Sprintf(`{"id":%d,"amount":"1.00"}`, b.ID))
		approved(t, s, &upd, "p1")
		s.SendToolRequest(upd)
		del := request("alpha", "ann", "c2", contracts.ToolDeleteExpense, fmt.Sprintf(`{"id":%d}`, b.ID))
		approved(t, s, &del, "p2")
		s.SendToolRequest(del)
		for _, id := range []string{"c1", "c2"} {
			res := s.Result("alpha", "conv-ann", id)
			if res.OK || res.Error.Code != contracts.CodeNotFound {
				t.Fatalf("%s across tenants = %+v", id, res)
			}
		}
		// Arguments cannot name a tenant: unknown fields are refused.
		sneaky := request("alpha", "ann", "c3", contracts.ToolListExpenses, `{"range":"this_month","tenant_id":"bravo"}`)
		s.SendToolRequest(sneaky)
		if res := s.Result("alpha", "conv-ann", "c3"); res.OK || res.Error.Code != contracts.CodeInvalidArgs {
			t.Fatalf("args naming a tenant = %+v", res)
		}
		list := request("alpha", "ann", "c4", contracts.ToolListExpenses, `{"range":"2026-11"}`)
		s.SendToolRequest(list)
		res := s.Result("alpha", "conv-ann", "c4")
		if !res.OK || strings.Contains(string(res.Data), "secret") {
			t.Fatalf("alpha's list = %s", res.Data)
		}
		got, err := s.Store.GetExpense(ctx, "bravo", "bob", b.ID)
		if err != nil || got.AmountMinor != 999 {
			t.Fatalf("bravo's expense changed: %+v %v", got, err)
		}
	})
}

// Three replicas share one limit: a user allowed N calls a minute gets
// exactly N through, and the rest are told when to retry.
func TestRateLimitHoldsAcrossReplicas(t *testing.T) {
	const limit = 5
	tools := toolrunner.Catalog()
	for i := range tools {
		if tools[i].Name == contracts.ToolListExpenses {
			tools[i].PerMinute = limit
		}
	}
	eachEngine(t, systest.Options{Toolrunners: 3, Tools: tools}, func(t *testing.T, s *systest.System) {
		const calls = 20
		for i := range calls {
			s.SendToolRequest(request("acme", "ann", fmt.Sprintf("c%d", i), contracts.ToolListExpenses, `{}`))
		}
		// Another user has a budget of their own.
		s.SendToolRequest(request("acme", "bob", "bob1", contracts.ToolListExpenses, `{}`))
		if res := s.Result("acme", "conv-bob", "bob1"); !res.OK {
			t.Fatalf("bob limited by ann's calls: %+v", res.Error)
		}
		ok, limited := 0, 0
		for i := range calls {
			res := s.Result("acme", "conv-ann", fmt.Sprintf("c%d", i))
			switch {
			case res.OK:
				ok++
			case res.Error.Code == contracts.CodeRateLimited:
				limited++
				if res.Error.RetryAfter < 1 || res.Error.RetryAfter > 60 {
					t.Errorf("retry after %d s", res.Error.RetryAfter)
				}
			default:
				t.Fatalf("unexpected result %+v", res.Error)
			}
		}
		if ok != limit || limited != calls-limit {
			t.Fatalf("%d through and %d limited, want %d and %d", ok, limited, limit, calls-limit)
		}
	})
}

// A tool request published on another tool's subject is dead-lettered and
// runs nothing: the subject a request arrives on is the tool it may run.
func TestRequestOnAnotherToolsSubjectIsDeadLettered(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		req := request("acme", "ann", "c1", contracts.ToolDeleteExpense, `{"id":1}`)
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Pub.Publish("purser.tool.request.list_expenses", bus.NewMessage("req-c1", b, bus.Headers{Type: contracts.TypeToolRequest,
			Tenant: "acme", User: "ann", Conversation: "conv-ann", Correlation: req.TurnID})); err != nil {
			t.Fatal(err)
		}
		dead := s.Bus.WaitN(1, func(m systest.Msg) bool { return strings.HasPrefix(m.Subject, "purser.dlq.") })
		if reason := dead[0].Header.Get(bus.HeaderDLQReason); !strings.Contains(reason, "identity") {
			t.Errorf("dead letter reason = %q", reason)
		}
		if got := s.Bus.All(func(m systest.Msg) bool { return strings.HasPrefix(m.Subject, "purser.tool.result.") }); len(got) != 0 {
			t.Fatalf("the misrouted request was answered: %s", got[0].Data)
		}
	})
}

// A mutation runs only for a proposal that belongs to the caller, in the
// same conversation, names the same tool and is approved: each rule is
// broken alone, and each time nothing is written.
func TestProposalMustMatchTheCall(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		store1 := func(id, user, conv, tool, status string) {
			t.Helper()
			err := s.Store.CreateProposal(ctx, store.Proposal{ID: id, TenantID: "acme", UserID: user, ConversationID: conv, TurnID: "turn-" + id,
				Tool: tool, Args: json.RawMessage(addArgs), Summary: "test", Status: status, Revision: 1, ExpiresAt: now.Add(15 * time.Minute), CreatedAt: now})
			if err != nil {
				t.Fatal(err)
			}
		}
		tests := []struct {
			name                         string
			propUser, propConv, propTool string
			status                       string
		}{
			{"another user's proposal", "bob", "conv-ann", contracts.ToolAddExpense, store.ProposalApproved},
			{"another conversation's proposal", "ann", "conv-other", contracts.ToolAddExpense, store.ProposalApproved},
			{"a proposal of another tool", "ann", "conv-ann", contracts.ToolFetchEmailAttachments, store.ProposalApproved},
			{"a rejected proposal", "ann", "conv-ann", contracts.ToolAddExpense, store.ProposalRejected},
		}
		for i, tt := range tests {
			id := fmt.Sprintf("p%d", i)
			store1(id, tt.propUser, tt.propConv, tt.propTool, tt.status)
			req := request("acme", "ann", fmt.Sprintf("c%d", i), contracts.ToolAddExpense, addArgs)
			req.ProposalID = id
			s.SendToolRequest(req)
			res := s.Result("acme", "conv-ann", req.CallID)
			if res.OK || res.Error.Code != contracts.CodeNotConfirmed {
				t.Errorf("%s: result = %+v, want not_confirmed", tt.name, res)
			}
		}
		if n := len(rows(t, s, "acme")); n != 0 {
			t.Fatalf("%d expenses written for proposals that do not match the call", n)
		}
	})
}

// Amounts are stored exactly in each currency's minor units (JPY has none,
// KWD three), and a change may move an expense to another currency with
// its amount in that currency.
func TestAmountsInEachCurrencysMinorUnits(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		run := func(callID, tool, args string) contracts.ToolResult {
			t.Helper()
			req := request("acme", "ann", callID, tool, args)
			approved(t, s, &req, "p-"+callID)
			s.SendToolRequest(req)
			return s.Result("acme", "conv-ann", callID)
		}
		for _, tt := range []struct {
			args     string
			minor    int64
			currency string
		}{
			{`{"item":"sushi","amount":1200,"currency":"JPY"}`, 1200, "JPY"},
			{`{"item":"fuel","amount":"1.250","currency":"KWD"}`, 1250, "KWD"},
			{`{"item":"tea","amount":3.5,"currency":"GBP"}`, 350, "GBP"},
		} {
			res := run("add-"+tt.currency, contracts.ToolAddExpense, tt.args)
			var out contracts.ExpenseChanged
			if !res.OK || json.Unmarshal(res.Data, &out) != nil || out.Expense.Amount.Minor != tt.minor || out.Expense.Amount.Currency != tt.currency {
				t.Errorf("add %s = %+v %s, want %d %s", tt.args, res.Error, res.Data, tt.minor, tt.currency)
			}
		}
		if res := run("add-bad", contracts.ToolAddExpense, `{"item":"ramen","amount":"12.5","currency":"JPY"}`); res.OK || res.Error.Code != contracts.CodeInvalidArgs {
			t.Errorf("12.5 JPY = %+v", res)
		}
		list := rows(t, s, "acme")
		var tea store.Expense
		for _, e := range list {
			if e.Item == "tea" {
				tea = e
			}
		}
		if res := run("upd-nocur", contracts.ToolUpdateExpense, fmt.Sprintf(`{"id":%d,"currency":"EUR"}`, tea.ID)); res.OK || res.Error.Code != contracts.CodeInvalidArgs {
			t.Errorf("a currency change without an amount = %+v", res)
		}
		res := run("upd-eur", contracts.ToolUpdateExpense, fmt.Sprintf(`{"id":%d,"amount":"4","currency":"EUR"}`, tea.ID))
		var out contracts.ExpenseChanged
		if !res.OK || json.Unmarshal(res.Data, &out) != nil || out.Expense.Amount != (contracts.Money{Minor: 400, Currency: "EUR"}) {
			t.Errorf("change to 4 EUR = %+v %s", res.Error, res.Data)
		}
	})
}

// get_chat_history reads back only the caller's own conversation, oldest
// first, searching and paging, never another conversation or user.
func TestChatHistoryIsTheCallersConversation(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		frame := func(user, conv, id string, f contracts.ServerFrame) {
			t.Helper()
			f.ConversationID, f.At = conv, now
			b, _ := json.Marshal(f)
			if _, _, err := s.Store.AppendConversationFrame(ctx, "acme", user, conv, id, b, now); err != nil {
				t.Fatal(err)
			}
		}
		say := func(text string) contracts.ServerFrame {
			return contracts.ServerFrame{Type: contracts.FrameUserMessage, UserMessage: &contracts.UserMessage{Text: text}}
		}
		answer := func(text string) contracts.ServerFrame {
			return contracts.ServerFrame{Type: contracts.FrameAnswer, Answer: &contracts.Answer{Content: text}}
		}
		frame("ann", "conv-ann", "1", say("my rent is due on the 3rd"))
		frame("ann", "conv-ann", "2", answer("Noted: rent on the 3rd."))
		frame("ann", "conv-ann", "3", contracts.ServerFrame{Type: contracts.FrameToolStart, Tool: &contracts.ToolProgress{CallID: "x", Tool: "list_expenses", Status: "started"}})
		frame("ann", "conv-ann", "4", say("and the gym is monthly"))
		frame("ann", "conv-ann", "5", answer("Gym noted."))
		frame("ann", "conv-other", "6", say("rent in my other conversation"))
		frame("bob", "conv-ann", "7", say("bob's rent"))

		history := func(callID, args string) contracts.ChatHistory {
			t.Helper()
			s.SendToolRequest(request("acme", "ann", callID, contracts.ToolGetChatHistory, args))
			res := s.Result("acme", "conv-ann", callID)
			var out contracts.ChatHistory
			if !res.OK || json.Unmarshal(res.Data, &out) != nil {
				t.Fatalf("get_chat_history %s = %+v %s", args, res.Error, res.Data)
			}
			return out
		}
		texts := func(h contracts.ChatHistory) []string {
			var out []string
			for _, m := range h.Messages {
				out = append(out, m.Role+": "+m.Text)
			}
			return out
		}
		if got := texts(history("h1", `{"query":"rent"}`)); fmt.Sprint(got) != "[user: my rent is due on the 3rd assistant: Noted: rent on the 3rd.]" {
			t.Errorf("search for rent = %q", got)
		}
		latest := history("h2", `{"limit":2}`)
		if got := texts(latest); fmt.Sprint(got) != "[user: and the gym is monthly assistant: Gym noted.]" || !latest.More {
			t.Errorf("latest two = %q (more %v)", got, latest.More)
		}
		older := history("h3", fmt.Sprintf(`{"limit":2,"before":%d}`, latest.Messages[0].Position))
		if got := texts(older); fmt.Sprint(got) != "[user: my rent is due on the 3rd assistant: Noted: rent on the 3rd.]" || older.More {
			t.Errorf("the page before = %q (more %v)", got, older.More)
		}
	})
}

// A tool result names, in its Purser-User header, the user of the signed
// request it answers: the result subject names only tenant and
// conversation, and two users may use the same conversation id, so the
// orchestrator finds the conversation waiting for it by that header.
func TestResultNamesItsUser(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		subject, err := bus.ToolResultSubject("acme", "shared")
		if err != nil {
			t.Fatal(err)
		}
		for _, user := range []string{"ann", "bob"} {
			req := request("acme", user, "list-"+user, "list_expenses", `{}`)
			req.ConversationID = "shared"
			s.SendToolRequest(req)
			msgs := s.Bus.WaitN(1, func(m systest.Msg) bool {
				if m.Subject != subject {
					return false
				}
				var r contracts.ToolResult
				return json.Unmarshal(m.Data, &r) == nil && r.CallID == req.CallID
			})
			if got := msgs[0].Header.Get(bus.HeaderUser); got != user {
				t.Errorf("result of %s's call names user %q", user, got)
			}
		}
	})
}
