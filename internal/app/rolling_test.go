package app

import (
	"fmt"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// A rolling restart of each service type, while a person works: two
// replicas of the service run; the first is stopped (SIGTERM: a graceful
// shutdown) right after the person sends a change, and started again,
// then the second likewise. Whatever the stopped replica held it
// finished or handed back to the other: every change gets its proposal
// and, approved, its answer, and the ledger ends with each change once.
func TestRollingRestartOfEachServiceFailsNoTurn(t *testing.T) {
	t.Parallel()
	svc := startApart(t, storetest.SQLiteDSN(t))
	c := dial(t, Info{HTTPAddr: svc.ingress}, svc.mint("acme", "ann", auth.RoleMember))
	n := 0
	change := func(before func()) {
		t.Helper()
		// A person's pace: two turns a change, within the ingress's two
		// turns a second.
		time.Sleep(time.Second)
		n++
		c.send(fmt.Sprintf(`{"type":"message","id":"m%d","conversation_id":"c1","text":"add coffee £%d"}`, n, n))
		before()
		p := c.next(contracts.FrameProposal)
		c.send(fmt.Sprintf(`{"type":"confirm","id":"y%d","conversation_id":"c1","proposal_id":"%s","decision":"approve"}`, n, p.Proposal.ProposalID))
		if a := c.next(contracts.FrameAnswer); a.Answer == nil || a.Answer.Added == nil || a.Answer.Added.Amount.Minor != int64(n*100) {
			t.Fatalf("change %d: answer %+v", n, a.Answer)
		}
	}
	for _, mode := range []config.Mode{config.ModeOrchestrator, config.ModeToolrunner, config.ModeNotifier} {
		_, stopSecond := svc.replica(mode)
		change(func() { svc.stop(mode) }) // the first goes while the turn runs
		svc.start(mode)
		change(stopSecond)
		change(func() {})
	}
	c.send(`{"type":"message","id":"list","conversation_id":"c2","text":"list my expenses"}`)
	l := c.next(contracts.FrameAnswer)
	if l.Answer == nil || len(l.Answer.Listed) != n {
		t.Fatalf("the ledger lists %d expenses after %d changes, want each once: %+v", len(l.Answer.Listed), n, l.Answer)
	}
}
