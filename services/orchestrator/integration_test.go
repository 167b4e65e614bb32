package orchestrator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// Each test runs over a real nats-server and each store engine, with two
// orchestrator replicas and a toolrunner, as deployed.
func eachEngine(t *testing.T, fn func(t *testing.T, s *systest.System)) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, systest.Start(t, systest.Options{DSN: e.DSN(t), Orchestrators: 2, Toolrunners: 1}))
		})
	}
}

func expenses(t *testing.T, s *systest.System, tenant string) []store.Expense {
	t.Helper()
	rows, err := s.Store.ListExpenses(context.Background(), store.ExpenseFilter{TenantID: tenant, AllUsers: true})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestProposeApproveAddsOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		ann := s.User("acme", "ann")
		turn := ann.Say("add electricity bill £200")
		p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, turn)
		if p.Tool != contracts.ToolAddExpense || !strings.Contains(p.Summary, "electricity bill") || !strings.Contains(p.Summary, "£200.00") {
			t.Fatalf("proposal = %+v", p)
		}
		if n := len(expenses(t, s, "acme")); n != 0 {
			t.Fatalf("%d expenses before the yes", n)
		}
		yes := ann.Confirm(p.ProposalID, "approve", nil)
		ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, yes)
		if ans.Added == nil || ans.Added.Item != "electricity bill" || ans.Added.Amount.Minor != 20000 || ans.Added.Amount.Currency != "GBP" {
			t.Fatalf("answer.added = %+v (content %q)", ans.Added, ans.Content)
		}
		// A double-clicked confirm and a redelivered turn change nothing.
		again := ann.Confirm(p.ProposalID, "approve", nil)
		ann.Resend(yes, "")
		reply := s.Bus.WaitN(1, func(m systest.Msg) bool {
			return ann.Agent(contracts.TypeAnswer, again)(m) || ann.Agent(contracts.TypeTurnError, again)(m)
		})
		if reply[0].Type == contracts.TypeAnswer && strings.Contains(string(reply[0].Data), `"added"`) {
			t.Fatalf("second approve answered as if it added again: %s", reply[0].Data)
		}
		s.Bus.Quiet(500 * time.Millisecond)
		rows := expenses(t, s, "acme")
		if len(rows) != 1 || rows[0].AmountMinor != 20000 {
			t.Fatalf("expenses = %+v, want exactly one of £200.00", rows)
		}
		if n := len(s.Bus.All(ann.Agent(contracts.TypeAnswer, yes))); n != 1 {
			t.Fatalf("%d answers for the approving turn, want 1", n)
		}
	})
}

func TestRejectAndForeignConfirm(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		ann := s.User("acme", "ann")
		p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("add coffee £3"))

		// Someone else, even in the same tenant, cannot confirm Ann's proposal.
		bob := s.User("acme", "bob")
		forged := bob.Confirm(p.ProposalID, "approve", nil)
		te := systest.Expect[contracts.TurnError](bob, contracts.TypeTurnError, forged)
		if te.Code != contracts.CodeProposalInvalid {
			t.Fatalf("forged confirm error = %+v", te)
		}
		// Nor can a user of another tenant, with the same conversation id.
		eve := s.User("evil", "eve")
		eve.Conversation = ann.Conversation
		te = systest.Expect[contracts.TurnError](eve, contracts.TypeTurnError, eve.Confirm(p.ProposalID, "approve", nil))
		if te.Code != contracts.CodeProposalInvalid {
			t.Fatalf("cross-tenant confirm error = %+v", te)
		}

		no := ann.Confirm(p.ProposalID, "reject", nil)
		// A no declines and asks what to change instead.
		q := systest.Expect[contracts.Clarify](ann, contracts.TypeClarify, no)
		if !strings.Contains(q.Question, orchestrator.AskWhatToChange) {
			t.Fatalf("after a no: %q", q.Question)
		}
		late := ann.Confirm(p.ProposalID, "approve", nil)
		te = systest.Expect[contracts.TurnError](ann, contracts.TypeTurnError, late)
		if te.Code != contracts.CodeProposalInvalid {
			t.Fatalf("approve after reject = %+v", te)
		}
		s.Bus.Quiet(300 * time.Millisecond)
		if n := len(expenses(t, s, "acme")); n != 0 {
			t.Fatalf("%d expenses after a rejection and forged confirms", n)
		}
		pr, err := s.Store.GetProposal(context.Background(), "acme", p.ProposalID)
		if err != nil || pr.Status != store.ProposalRejected {
			t.Fatalf("stored proposal %+v, %v", pr, err)
		}
	})
}

func TestEditRunsTheUsersArgs(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		ann := s.User("acme", "ann")
		p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("add taxi £20"))
		// An edit that tries to switch tools or smuggle fields is refused.
		bad := ann.Confirm(p.ProposalID, "edit", json.RawMessage(`{"id":1}`))
		te := systest.Expect[contracts.TurnError](ann, contracts.TypeTurnError, bad)
		if te.Code != contracts.CodeInvalidArgs {
			t.Fatalf("bad edit = %+v", te)
		}
		edit := ann.Confirm(p.ProposalID, "edit", json.RawMessage(`{"item":"taxi home","amount":"23.40","currency":"GBP","date":"2026-11-20"}`))
		ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, edit)
		if ans.Added == nil || ans.Added.Amount.Minor != 2340 || ans.Added.Item != "taxi home" || ans.Added.Date != "2026-11-20" {
			t.Fatalf("edited add = %+v (%q)", ans.Added, ans.Content)
		}
		rows := expenses(t, s, "acme")
		if len(rows) != 1 || rows[0].AmountMinor != 2340 {
			t.Fatalf("expenses = %+v", rows)
		}
	})
}

func TestClarifyThenAct(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		ann := s.User("acme", "ann")
		q := systest.Expect[contracts.Clarify](ann, contracts.TypeClarify, ann.Say("add coffee"))
		if !strings.Contains(q.Question, "How much") {
			t.Fatalf("clarify = %q", q.Question)
		}
		p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("£3.20"))
		var args contracts.AddExpenseArgs
		if err := json.Unmarshal(p.Args, &args); err != nil || args.Item != "coffee" || args.Amount != "3.20" {
			t.Fatalf("proposal after the answer: %s (%v)", p.Args, err)
		}
	})
}

// Reads run without a proposal and their results reach the answer.
func TestReadsAnswerFromTheStore(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		today := time.Now().In(mustLoc(t, "Europe/London")).Format(time.DateOnly)
		for _, e := range []store.Expense{
			{TenantID: "acme", UserID: "ann", Item: "rent", AmountMinor: 120000, Currency: "GBP", Date: today, Category: "bills"},
			{TenantID: "acme", UserID: "ann", Item: "lunch", AmountMinor: 1250, Currency: "GBP", Date: today, Category: "eating out"},
			{TenantID: "other", UserID: "zed", Item: "yacht", AmountMinor: 99999900, Currency: "GBP", Date: today},
		} {
			if _, err := s.Store.AddExpense(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		ann := s.User("acme", "ann")
		ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Say("what did I spend this month?"))
		if ans.Balance == nil || len(ans.Balance.Total) != 1 || ans.Balance.Total[0].Minor != 121250 || ans.Balance.Count != 2 {
			t.Fatalf("balance = %+v (%q)", ans.Balance, ans.Content)
		}
		list := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Say("show my expenses this month"))
		if len(list.Listed) != 2 {
			t.Fatalf("listed = %+v", list.Listed)
		}
		for _, e := range list.Listed {
			if e.Item == "yacht" {
				t.Fatal("another tenant's expense was listed")
			}
		}
	})
}

// A turn that arrives while tools run waits and is applied after, in order.
func TestTurnsOfOneConversationApplyInOrder(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		ann := s.User("acme", "ann")
		var turns []string
		for _, text := range []string{"what did I spend this month?", "show my expenses this month", "hello", "what did I spend last week"} {
			turns = append(turns, ann.Say(text))
		}
		final := s.Bus.WaitN(len(turns), func(m systest.Msg) bool {
			return ann.Agent(contracts.TypeAnswer, "")(m) || ann.Agent(contracts.TypeTurnError, "")(m)
		})
		var order []string
		for _, m := range final {
			var probe struct {
				TurnID string `json:"turn_id"`
			}
			_ = json.Unmarshal(m.Data, &probe)
			order = append(order, probe.TurnID)
		}
		for i := range turns {
			if order[i] != turns[i] {
				t.Fatalf("answers in order %v, want %v", order, turns)
			}
		}
	})
}

func mustLoc(t *testing.T, name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A turn whose tool never answers (no toolrunner runs) ends with a clear
// timeout once its budget is spent, and the conversation moves on.
func TestStuckTurnTimesOut(t *testing.T) {
	var skew atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Now: clock})
	ann := s.User("acme", "ann")
	stuck := ann.Say("what did I spend this month?")
	s.Bus.WaitN(1, systest.OfType(contracts.TypeToolRequest))
	waiting := ann.Say("hello")
	s.Bus.Quiet(300 * time.Millisecond)
	if n := len(s.Bus.All(ann.Agent(contracts.TypeTurnError, stuck))); n != 0 {
		t.Fatal("timed out before the budget was spent")
	}
	skew.Store(int64(orchestrator.TurnBudget + time.Second))
	te := systest.Expect[contracts.TurnError](ann, contracts.TypeTurnError, stuck)
	if te.Code != contracts.CodeTimeout {
		t.Fatalf("stuck turn ended with %+v", te)
	}
	// The turn that queued behind it runs now.
	if ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, waiting); !strings.HasPrefix(ans.Content, "Hello") {
		t.Fatalf("queued turn answered %q", ans.Content)
	}
}

// Malformed turns on the bus (bad JSON, an unknown field, a subject or id
// with a '.' or '*') change nothing: they go to the dead-letter queue with
// a reason, and the orchestrator keeps serving.
func TestMalformedTurnsAreDeadLettered(t *testing.T) {
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1})
	dlq := s.Watch("purser.dlq.>")
	bad := []string{
		`{"turn_id":"x1",`,
		`{"turn_id":"x2","tenant_id":"acme","user_id":"ann","roles":["member"],"conversation_id":"c1","text":"hi","timezone":"UTC","sent_at":"2026-11-22T10:00:00Z","tool":"delete_expense"}`,
		`{"turn_id":"x.3","tenant_id":"acme","user_id":"ann","roles":["member"],"conversation_id":"c1","text":"hi","timezone":"UTC","sent_at":"2026-11-22T10:00:00Z"}`,
		`{"turn_id":"x4","tenant_id":"acme","user_id":"ann","roles":["admin"],"conversation_id":"c1","text":"hi","timezone":"UTC","sent_at":"2026-11-22T10:00:00Z"}`,
	}
	for i, payload := range bad {
		m := bus.NewMessage(fmt.Sprintf("bad-%d", i), []byte(payload), bus.Headers{Type: contracts.TypeUserTurn, Tenant: "acme"})
		if err := s.Pub.Publish("purser.turns.acme.c1", m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := bus.TurnSubject("acme", "c*"); err == nil {
		t.Fatal("a '*' became a subject token")
	}
	got := dlq.WaitN(len(bad), nil)
	for _, m := range got {
		if m.Subject != "purser.dlq.orchestrator-0" {
			t.Errorf("dead letter on %s", m.Subject)
		}
	}
	ann := s.User("acme", "ann")
	if ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Say("hello")); !strings.HasPrefix(ans.Content, "Hello") {
		t.Fatalf("after bad input: %q", ans.Content)
	}
	if _, err := s.Store.LoadConversation(context.Background(), "acme", "ann", "c1"); err == nil {
		t.Fatal("a malformed turn created conversation state")
	}
}
