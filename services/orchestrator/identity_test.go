package orchestrator_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// A well-formed turn whose payload names another tenant than its subject
// (or whose headers disagree with it) is dead-lettered with the reason and
// acts for nobody; the conversation it was aimed at goes on serving.
func TestTurnWhoseSubjectAndPayloadDisagreeIsDeadLettered(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		forge := func(id, subject string, turn contracts.UserTurn, h bus.Headers) {
			b, err := json.Marshal(turn)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Pub.Publish(subject, bus.NewMessage(id, b, h)); err != nil {
				t.Fatal(err)
			}
		}
		other := contracts.UserTurn{TurnID: "forged1", TenantID: "other", UserID: "mallory", Roles: []string{"owner"}, ConversationID: "x",
			Text: "add £5 coffee", Timezone: "UTC", SentAt: time.Now().UTC()}
		forge("forged1", "purser.turns.acme.x", other, bus.Headers{Type: contracts.TypeUserTurn, Tenant: "acme", Conversation: "x"})
		// Subject and payload agree, but the headers claim someone else.
		mine := other
		mine.TurnID, mine.TenantID, mine.UserID = "forged2", "acme", "ann"
		forge("forged2", "purser.turns.acme.x", mine, bus.Headers{Type: contracts.TypeUserTurn, Tenant: "acme", User: "bob", Conversation: "x"})

		dead := s.Bus.WaitN(2, func(m systest.Msg) bool { return strings.HasPrefix(m.Subject, "purser.dlq.orchestrator") })
		for _, m := range dead {
			if reason := m.Header.Get(bus.HeaderDLQReason); !strings.Contains(reason, "identity") {
				t.Errorf("dead letter reason = %q, want an identity mismatch", reason)
			}
		}
		ann := s.User("acme", "ann")
		turn := ann.Say("hello")
		systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, turn)
		if got := s.Bus.All(func(m systest.Msg) bool {
			return strings.HasPrefix(m.Subject, "purser.agent.other.") || strings.HasPrefix(m.Subject, "purser.agent.acme.ann.x")
		}); len(got) != 0 {
			t.Fatalf("the forged turns acted: %+v", got)
		}
	})
}

// Every message a turn causes carries its correlation id, tool progress
// included, so the turn is one trace. Progress goes live to the user's
// sockets as tool_start and tool_result frames naming the turn, and never
// through the AGENT stream, which stores what a resume replays.
func TestToolProgressCarriesTheTurnsCorrelation(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *systest.System) {
		ann := s.User("acme", "ann")
		turn := ann.Say("how much did I spend this month?")
		systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, turn)
		deliver, err := bus.DeliverSubject("acme", "ann")
		if err != nil {
			t.Fatal(err)
		}
		live := s.Bus.WaitN(2, func(m systest.Msg) bool {
			return m.Subject == deliver && (m.Type == contracts.FrameToolStart || m.Type == contracts.FrameToolResult)
		})
		var types []string
		for _, m := range live {
			var f contracts.ServerFrame
			if err := json.Unmarshal(m.Data, &f); err != nil {
				t.Fatal(err)
			}
			types = append(types, f.Type)
			if got := m.Header.Get(bus.HeaderCorrelation); got != turn || f.TurnID != turn {
				t.Errorf("tool progress correlation %q, frame turn %q, want the turn %q", got, f.TurnID, turn)
			}
			if f.Tool == nil || f.Tool.CallID == "" || f.Seq != 0 {
				t.Errorf("tool progress frame %s: want a call and no seq (it is not stored)", m.Data)
			}
		}
		if types[0] != contracts.FrameToolStart || types[1] != contracts.FrameToolResult {
			t.Errorf("tool progress came as %v, want the start, then the result", types)
		}
		if stored := s.Bus.All(systest.OfType(contracts.TypeToolProgress)); len(stored) != 0 {
			t.Errorf("%d tool progress events went through AGENT; progress is live only", len(stored))
		}
	})
}
