package offline_test

import (
	"encoding/json"
	"testing"

	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The offline model in the real orchestrator and toolrunner over NATS: its
// follow-ups and corrections read the history exactly as the loop records
// it (questions, and proposals as "Proposed: <summary>").
func TestConversationWithTheOfflineModel(t *testing.T) {
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1})
	ann := s.User("acme", "ann")

	q := systest.Expect[contracts.Clarify](ann, contracts.TypeClarify, ann.Say("add coffee"))
	if q.Question != "How much was coffee?" {
		t.Fatalf("question = %q", q.Question)
	}
	// A new request while the question is open starts over.
	p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("add 12.50 lunch today"))
	if p.Summary != "Add expense 'lunch' £12.50 on "+dateOf(t, p)+"?" {
		t.Fatalf("summary = %q", p.Summary)
	}
	// A correction proposes again, and the first proposal can no longer run.
	p2 := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("no, 15 not 12.50"))
	if p2.Summary != "Add expense 'lunch' £15.00 on "+dateOf(t, p)+"?" {
		t.Fatalf("corrected summary = %q", p2.Summary)
	}
	stale := systest.Expect[contracts.TurnError](ann, contracts.TypeTurnError, ann.Confirm(p.ProposalID, "approve", nil))
	if stale.Code != contracts.CodeProposalInvalid {
		t.Fatalf("approving the replaced proposal: %+v", stale)
	}
	ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Confirm(p2.ProposalID, "approve", nil))
	if ans.Added == nil || ans.Added.Amount != (contracts.Money{Minor: 1500, Currency: "GBP"}) {
		t.Fatalf("answer = %+v", ans)
	}
	// An amount that cannot be used is asked about, never guessed.
	q = systest.Expect[contracts.Clarify](ann, contracts.TypeClarify, ann.Say("add 1e308 dollars taxi"))
	if q.Question != "1e308 dollars is too large for me to record as an amount. How much did you pay for taxi?" {
		t.Fatalf("question = %q", q.Question)
	}
	p = systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("$23.40"))
	if p.Summary != "Add expense 'taxi' $23.40 on "+dateOf(t, p)+"?" {
		t.Fatalf("summary = %q", p.Summary)
	}
}

func dateOf(t *testing.T, p contracts.Proposal) string {
	t.Helper()
	var a contracts.AddExpenseArgs
	if err := json.Unmarshal(p.Args, &a); err != nil || a.Date == nil {
		t.Fatalf("proposal args %s: %v", p.Args, err)
	}
	return *a.Date
}
