package orchestrator_test

import (
	"context"
	"encoding/json"
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

// Adversarial suites of the orchestrator's rules; each test names the
// rule it defends.

// Rule: confirmation gate, foreign confirmations, and conversations per
// person. Conversation ids are the client's to choose, so another user of
// the tenant may name Ann's conversation id and her proposal's id: that id
// is a conversation of his own, where Ann's proposal is unknown, so his
// confirm is refused and changes nothing; his words there reach his own
// conversation, not hers; and Ann's proposal still waits for her own yes.
func TestConfirmInAnotherUsersConversationIsRefused(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		ann := s.User("acme", "ann")
		p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("add coffee £3"))

		bob := s.User("acme", "bob")
		bob.Conversation = ann.Conversation
		te := systest.Expect[contracts.TurnError](bob, contracts.TypeTurnError, bob.Confirm(p.ProposalID, "approve", nil))
		if te.Code != contracts.CodeProposalInvalid {
			t.Fatalf("bob's confirm of ann's proposal in his %s = %+v, want %s", bob.Conversation, te, contracts.CodeProposalInvalid)
		}
		// A yes in his conversation of that id is his own turn: it is
		// answered to him, and approves nothing of ann's.
		ans := systest.Expect[contracts.Answer](bob, contracts.TypeAnswer, bob.Say("yes"))
		if ans.Added != nil {
			t.Fatalf("bob's yes in his %s added %+v", bob.Conversation, ans.Added)
		}
		if n := len(expenses(t, s, "acme")); n != 0 {
			t.Fatalf("%d expenses after bob's attempts", n)
		}
		ans = systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Confirm(p.ProposalID, "approve", nil))
		if ans.Added == nil || ans.Added.Amount.Minor != 300 {
			t.Fatalf("ann's own approve after bob's attempts = %+v", ans)
		}
		if rows := expenses(t, s, "acme"); len(rows) != 1 || rows[0].UserID != "ann" {
			t.Fatalf("expenses = %+v, want ann's one", rows)
		}
	})
}

// Rule: idempotency. A turn redelivered under a new Nats-Msg-Id (past
// JetStream's duplicate window, or republished by a client's retry through
// another ingress) is the same turn: its confirm does not run twice nor
// answer that the proposal is unknown, and its text proposes nothing new.
func TestRedeliveredTurnUnderANewMessageIDAppliesOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		ann := s.User("acme", "ann")
		republish := func(turnID string, turn contracts.UserTurn, n int) {
			t.Helper()
			turn.TurnID, turn.TenantID, turn.UserID, turn.Roles, turn.ConversationID = turnID, "acme", "ann", ann.Roles, ann.Conversation
			turn.Timezone, turn.SentAt = ann.Timezone, time.Now().UTC()
			b, err := json.Marshal(turn)
			if err != nil {
				t.Fatal(err)
			}
			subject, err := bus.TurnSubject("acme", ann.Conversation)
			if err != nil {
				t.Fatal(err)
			}
			m := bus.NewMessage("again-"+turnID+"-"+string(rune('a'+n)), b, bus.Headers{Type: contracts.TypeUserTurn, Tenant: "acme", User: "ann",
				Conversation: ann.Conversation, Correlation: turnID})
			if err := s.Pub.Publish(subject, m); err != nil {
				t.Fatal(err)
			}
		}
		say := ann.Say("add coffee £3")
		p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, say)
		republish(say, contracts.UserTurn{Text: "add coffee £3"}, 0)
		yes := ann.Confirm(p.ProposalID, "approve", nil)
		ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, yes)
		if ans.Added == nil {
			t.Fatalf("approve = %+v", ans)
		}
		for i := range 2 {
			republish(yes, contracts.UserTurn{Confirm: &contracts.Confirm{ProposalID: p.ProposalID, Decision: "approve"}}, i)
		}
		// The next turn is applied after the redeliveries (one
		// conversation's turns apply in order), so once it is answered
		// they have been handled.
		systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Say("what did I spend this month?"))
		if errs := s.Bus.All(ann.Agent(contracts.TypeTurnError, "")); len(errs) != 0 {
			t.Fatalf("a redelivered turn was answered with an error: %s", errs[0].Data)
		}
		if n := len(s.Bus.All(ann.Agent(contracts.TypeProposal, ""))); n != 1 {
			t.Fatalf("%d proposals, want 1", n)
		}
		if rows := expenses(t, s, "acme"); len(rows) != 1 {
			t.Fatalf("expenses = %+v, want one", rows)
		}
	})
}

// Rule: confirmation gate, forged, replayed, expired and misplaced
// confirmations. A proposal id nobody issued, Ann's own proposal
// confirmed from another of her conversations and a second yes to a
// change already made are each refused with proposal_invalid; a yes after
// the proposal expired says so; one change is made, by the one valid yes.
func TestForgedReplayedExpiredAndMisplacedConfirms(t *testing.T) {
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1, Now: clock})
	ann := s.User("acme", "ann")
	refused := func(u *systest.User, turn, what string) {
		t.Helper()
		te := systest.Expect[contracts.TurnError](u, contracts.TypeTurnError, turn)
		if te.Code != contracts.CodeProposalInvalid {
			t.Errorf("%s: %+v, want proposal_invalid", what, te)
		}
	}
	p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("add coffee £3"))
	refused(ann, ann.Confirm("p"+strings.Repeat("0", 30), "approve", nil), "a forged proposal id")
	elsewhere := s.User("acme", "ann")
	elsewhere.Conversation = "conv-ann-second"
	refused(elsewhere, elsewhere.Confirm(p.ProposalID, "approve", nil), "her proposal from another conversation")
	systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Confirm(p.ProposalID, "approve", nil))
	refused(ann, ann.Confirm(p.ProposalID, "approve", nil), "a second yes under a new turn")

	late := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("add cake £4"))
	offset.Store(int64(orchestrator.ProposalTTL + time.Minute))
	// A yes after the proposal expired runs nothing: it says it expired
	// (never that it was declined) and offers to propose it again.
	q := systest.Expect[contracts.Clarify](ann, contracts.TypeClarify, ann.Confirm(late.ProposalID, "approve", nil))
	if !strings.Contains(q.Question, "expired") || !strings.Contains(q.Question, "propose it again") {
		t.Errorf("a yes after the proposal expired: %q", q.Question)
	}
	if rows := expenses(t, s, "acme"); len(rows) != 1 || rows[0].AmountMinor != 300 {
		t.Fatalf("expenses = %+v, want the coffee alone", rows)
	}
	waitUntil(t, "the late proposal stored as expired", func() bool {
		pr, err := s.Store.GetProposal(context.Background(), "acme", late.ProposalID)
		return err == nil && pr.Status == store.ProposalExpired
	})
}
