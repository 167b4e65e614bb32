package offline_test

import (
	"strings"
	"testing"

	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// TestNoAsksWhatToChange: "no" to a proposal declines it and asks what to
// change; the reply edits the declined proposal's values; "yes but …"
// edits the proposal and proposes again.
func TestNoAsksWhatToChange(t *testing.T) {
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1})
	ann := s.User("acme", "ann")

	p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("add 12.50 lunch today"))
	q := systest.Expect[contracts.Clarify](ann, contracts.TypeClarify, ann.Say("no"))
	if !strings.Contains(q.Question, "What should I change?") {
		t.Fatalf("after no: %q", q.Question)
	}
	p2 := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("14 not 12.50"))
	if p2.Summary != "Add expense 'lunch' £14.00 on "+dateOf(t, p)+"?" {
		t.Fatalf("edited after no: %q", p2.Summary)
	}
	p3 := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, ann.Say("yes but 15, not 14"))
	if p3.Summary != "Add expense 'lunch' £15.00 on "+dateOf(t, p)+"?" {
		t.Fatalf("yes but: %q", p3.Summary)
	}
}
