package orchestrator

import (
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// turnOutcome is how an output of type typ ends its turn (answered,
// clarified, proposed, error), or "" when it does not end one.
func turnOutcome(typ string) string {
	switch typ {
	case contracts.TypeAnswer:
		return "answered"
	case contracts.TypeClarify:
		return "clarified"
	case contracts.TypeProposal:
		return "proposed"
	case contracts.TypeTurnError:
		return "error"
	}
	return ""
}

// traceEnds records the invoke_agent span of each turn that eff ended,
// from when the turn started (before holds it; a turn that ended in the
// event that started it started at now) until now.
func (o *Orchestrator) traceEnds(ref convRef, before State, eff Effects, now time.Time) {
	if !o.cfg.Tracer.Enabled() {
		return
	}
	for _, op := range eff.Outputs {
		outcome := turnOutcome(op.Type)
		turn := correlationOf(op.Payload)
		if outcome == "" || turn == "" {
			continue
		}
		start := now
		if before.Turn != nil && before.Turn.TurnID == turn && !before.Turn.StartedAt.IsZero() {
			start = before.Turn.StartedAt
		}
		o.cfg.Tracer.EndTurn(ref.tenant, ref.id, turn, outcome, start, o.now())
	}
}
