package orchestrator

import (
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/purser-ai/purser/internal/bus"
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
// once, with the last output that ended it, from when the turn started
// (before holds it; a turn that ended in the event that started it
// started at now) until now.
func (o *Orchestrator) traceEnds(ref convRef, before State, eff Effects, now time.Time) {
	if !o.cfg.Tracer.Enabled() {
		return
	}
	var turns []string
	outcomes := map[string]string{}
	for _, op := range eff.Outputs {
		outcome, turn := turnOutcome(op.Type), correlationOf(op.Payload)
		if outcome == "" || turn == "" {
			continue
		}
		if _, seen := outcomes[turn]; !seen {
			turns = append(turns, turn)
		}
		outcomes[turn] = outcome
	}
	for _, turn := range turns {
		start := now
		if before.Turn != nil && before.Turn.TurnID == turn && !before.Turn.StartedAt.IsZero() {
			start = before.Turn.StartedAt
		}
		o.cfg.Tracer.EndTurn(ref.tenant, ref.id, turn, outcomes[turn], start, o.now())
	}
}

// tokenMessage is an answer token for the sockets. Tokens go bare, but
// while spans are made they carry the turn's correlation and trace, so
// their publish is in the turn's trace.
func (o *Orchestrator) tokenMessage(id string, payload []byte, ref convRef, turnID string) *message.Message {
	if !o.cfg.Tracer.Enabled() {
		return message.NewMessage(id, payload)
	}
	return bus.NewMessage(id, payload, bus.Headers{Type: contracts.FrameToken, Tenant: ref.tenant, User: ref.user, Conversation: ref.id, Correlation: turnID})
}
