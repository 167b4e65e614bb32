package orchestrator_test

import (
	"encoding/json"
	"testing"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Rule: conversations per person. Two users who choose the same
// conversation id each have their own: their turns, tool results and
// answers never meet, whichever writes first.
func TestSameConversationIDTwoUsers(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		bob := s.User("acme", "bob")
		bob.Conversation = "chat-olga"
		olga := s.User("acme", "olga")
		olga.Conversation = "chat-olga"

		p := systest.Expect[contracts.Proposal](bob, contracts.TypeProposal, bob.Say("add tea £2"))
		systest.Expect[contracts.Answer](bob, contracts.TypeAnswer, bob.Confirm(p.ProposalID, "approve", nil))

		// Olga's first words in "chat-olga" start her conversation: bob's
		// pending work and history are not hers, and her list is her own.
		l := systest.Expect[contracts.Answer](olga, contracts.TypeAnswer, olga.Say("list my expenses"))
		if len(l.Listed) != 0 {
			t.Fatalf("olga's list in chat-olga = %+v, want none (bob's tea is his)", l.Listed)
		}
		op := systest.Expect[contracts.Proposal](olga, contracts.TypeProposal, olga.Say("add coffee £3"))
		oa := systest.Expect[contracts.Answer](olga, contracts.TypeAnswer, olga.Confirm(op.ProposalID, "approve", nil))
		if oa.Added == nil || oa.Added.Amount.Minor != 300 {
			t.Fatalf("olga's approve = %+v", oa)
		}
		b := systest.Expect[contracts.Answer](bob, contracts.TypeAnswer, bob.Say("list my expenses"))
		if len(b.Listed) != 1 || b.Listed[0].Item != "tea" {
			t.Fatalf("bob's list in chat-olga = %+v, want his tea alone", b.Listed)
		}
		for _, u := range []*systest.User{bob, olga} {
			if n := len(s.Bus.All(u.Agent(contracts.TypeTurnError, ""))); n != 0 {
				t.Errorf("%s got %d turn errors in chat-olga", u.ID, n)
			}
		}
	})
}

// Tool results published before conversations were per user name no user
// (no Purser-User header). Each still reaches the conversation waiting for
// it: the id's one owner's, or, once another user took the same id, the one
// whose turn has that call open.
func TestToolResultWithoutUserReachesTheWaitingConversation(t *testing.T) {
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1})
	ann := s.User("acme", "ann")
	ann.Conversation = "shared"
	bob := s.User("acme", "bob")
	bob.Conversation = "shared"

	// answerWithoutUser answers u's list_expenses call of turn, as a
	// toolrunner of the previous release would have.
	answerWithoutUser := func(u *systest.User, turn string) {
		t.Helper()
		reqs := s.Bus.WaitN(1, func(m systest.Msg) bool {
			if m.Type != contracts.TypeToolRequest {
				return false
			}
			var r contracts.ToolRequest
			return json.Unmarshal(m.Data, &r) == nil && r.TurnID == turn
		})
		req := systest.Decode[contracts.ToolRequest](t, reqs[0])
		if req.UserID != u.ID {
			t.Fatalf("request of %s's turn names %s", u.ID, req.UserID)
		}
		b, err := json.Marshal(contracts.ToolResult{CallID: req.CallID, Tool: req.Tool, OK: true, Data: json.RawMessage(`{"expenses":[]}`)})
		if err != nil {
			t.Fatal(err)
		}
		subject, err := bus.ToolResultSubject("acme", "shared")
		if err != nil {
			t.Fatal(err)
		}
		m := bus.NewMessage(req.CallID+"-result", b, bus.Headers{Type: contracts.TypeToolResult, Tenant: "acme", Conversation: "shared",
			Correlation: req.TurnID})
		if err := s.Pub.Publish(subject, m); err != nil {
			t.Fatal(err)
		}
	}

	first := ann.Say("list my expenses")
	answerWithoutUser(ann, first)
	systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, first)

	annTurn, bobTurn := ann.Say("list my expenses"), bob.Say("list my expenses")
	answerWithoutUser(bob, bobTurn)
	answerWithoutUser(ann, annTurn)
	systest.Expect[contracts.Answer](bob, contracts.TypeAnswer, bobTurn)
	systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, annTurn)
	for _, u := range []*systest.User{ann, bob} {
		if n := len(s.Bus.All(u.Agent(contracts.TypeTurnError, ""))); n != 0 {
			t.Errorf("%s got %d turn errors", u.ID, n)
		}
	}
}
