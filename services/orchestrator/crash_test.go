package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// crashes fails the first n times each handler reaches point, as if the
// process died there; the message is then redelivered.
type crashes struct {
	mu    sync.Mutex
	point string
	n     int
	hits  int
}

func (c *crashes) at(point string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if point != c.point {
		return nil
	}
	c.hits++
	if c.hits%(c.n+1) != 0 {
		return fmt.Errorf("crash at %s", point)
	}
	return nil
}

// agentEvents reads what the AGENT stream holds for a conversation: what the
// notifier, and so the client, will see.
func agentEvents(t *testing.T, s *systest.System, u *systest.User) []systest.Msg {
	t.Helper()
	subject, _ := bus.AgentSubject(u.Tenant, u.ID, u.Conversation)
	ctx := context.Background()
	c, err := s.JS.OrderedConsumer(ctx, bus.StreamAgent, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}})
	if err != nil {
		t.Fatal(err)
	}
	var out []systest.Msg
	for {
		m, err := c.Next(jetstream.FetchMaxWait(time.Second))
		if errors.Is(err, jetstream.ErrMsgIteratorClosed) || err != nil {
			return out
		}
		out = append(out, systest.Msg{Subject: m.Subject(), Type: m.Headers().Get(bus.HeaderType), Data: m.Data()})
	}
}

// The orchestrator stopped at each commit boundary and restarted (the
// message redelivered) still ends every turn with exactly one terminal
// event, and no effect happens twice.
func TestCrashAtEachCommitBoundary(t *testing.T) {
	for _, point := range []string{"saved", "published", "handled"} {
		for _, e := range storetest.Engines() {
			t.Run(point+"/"+e.Name, func(t *testing.T) {
				t.Parallel()
				c := &crashes{point: point, n: 3}
				s := systest.Start(t, systest.Options{DSN: e.DSN(t), Orchestrators: 1, Toolrunners: 1,
					Orchestrator: orchestrator.Config{FailPoint: c.at}})
				ann := s.User("acme", "ann")
				add := ann.Say("add tea £2")
				p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, add)
				yes := ann.Confirm(p.ProposalID, "approve", nil)
				systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, yes)
				hello := ann.Say("hello")
				systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, hello)
				s.Bus.Quiet(2500 * time.Millisecond) // past the relay's straggler age

				got := map[string]int{}
				for _, m := range agentEvents(t, s, ann) {
					var probe struct {
						TurnID string `json:"turn_id"`
					}
					_ = json.Unmarshal(m.Data, &probe)
					got[probe.TurnID+" "+m.Type]++
				}
				// tool_progress (started, succeeded) carries the call, not the turn.
				want := map[string]int{add + " proposal": 1, " tool_progress": 2, yes + " answer": 1, hello + " answer": 1}
				for k, n := range want {
					if got[k] != n {
						t.Errorf("%s: %d in AGENT, want %d (all: %v)", k, got[k], n, got)
					}
				}
				if len(got) != len(want) {
					t.Errorf("AGENT holds %v, want only %v", got, want)
				}
				if rows := expenses(t, s, "acme"); len(rows) != 1 {
					t.Errorf("%d expenses, want 1", len(rows))
				}
				if c.hits == 0 {
					t.Fatal("the fail point was never reached: the test proves nothing")
				}
			})
		}
	}
}
