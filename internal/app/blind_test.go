package app

import (
	"strings"
	"testing"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Proposals are never blind, end to end with the offline model: a deletion
// of a number with no expense is answered at once and proposes nothing (a
// proposal frame fails next), and a deletion of an expense shows its item
// and amount in the proposal, whose yes deletes it.
func TestDeletionsAreLookedUpFirst(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	c := dial(t, info, mint(t, info, "demo", "blind", auth.RoleMember))

	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"delete expense 99999"}`)
	missing := c.next(contracts.FrameAnswer)
	if !strings.HasPrefix(missing.Answer.Content, "There is no expense #99999.") {
		t.Fatalf("answer to a missing number = %q", missing.Answer.Content)
	}

	c.send(`{"type":"message","id":"m2","conversation_id":"c1","text":"add 3.20 for flat white"}`)
	add := c.next(contracts.FrameProposal)
	c.send(`{"type":"confirm","id":"m3","conversation_id":"c1","proposal_id":"` + add.Proposal.ProposalID + `","decision":"approve"}`)
	if added := c.next(contracts.FrameAnswer); added.Answer.Added == nil || added.Answer.Added.ID != 1 {
		t.Fatalf("add answered %+v, want expense #1 added", added.Answer)
	}

	c.send(`{"type":"message","id":"m4","conversation_id":"c1","text":"delete expense #1"}`)
	del := c.next(contracts.FrameProposal)
	if del.Proposal.Tool != contracts.ToolDeleteExpense || !strings.HasPrefix(del.Proposal.Summary, "Delete expense #1: flat white, £3.20 on ") {
		t.Fatalf("deletion proposal = %+v, want it to show the flat white and its amount", del.Proposal)
	}
	c.send(`{"type":"confirm","id":"m5","conversation_id":"c1","proposal_id":"` + del.Proposal.ProposalID + `","decision":"approve"}`)
	if deleted := c.next(contracts.FrameAnswer); deleted.Answer.Deleted == nil || deleted.Answer.Deleted.ID != 1 {
		t.Fatalf("the yes answered %+v, want expense #1 deleted", deleted.Answer)
	}

	c.send(`{"type":"message","id":"m6","conversation_id":"c1","text":"delete expense 1"}`)
	if gone := c.next(contracts.FrameAnswer); !strings.HasPrefix(gone.Answer.Content, "There is no expense #1.") {
		t.Fatalf("after the deletion, deleting #1 again answered %q", gone.Answer.Content)
	}
}
