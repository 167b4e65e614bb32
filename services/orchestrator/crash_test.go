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
// message redelivered, the pending model call made again) still ends
// every turn with exactly one terminal event, and no effect happens twice.
// "inline" takes the model's decision within the handler; "pending"
// never waits for the model, so every call is stored as pending, made
// outside the handler and its decision applied as a new event, which
// adds the boundary "decided" (the model answered, nothing stored yet).
func TestCrashAtEachCommitBoundary(t *testing.T) {
	type mode struct {
		name   string
		cfg    orchestrator.Config
		points []string
	}
	modes := []mode{
		{"inline", orchestrator.Config{}, []string{"saved", "published", "handled"}},
		{"pending", orchestrator.Config{ModelInlineWait: -1, ModelLease: 300 * time.Millisecond},
			[]string{"saved", "published", "handled", "decided"}},
	}
	for _, m := range modes {
		for _, point := range m.points {
			for _, e := range storetest.Engines() {
				t.Run(m.name+"/"+point+"/"+e.Name, func(t *testing.T) {
					t.Parallel()
					c := &crashes{point: point, n: 3}
					cfg := m.cfg
					cfg.FailPoint = c.at
					crashTurns(t, c, systest.Start(t, systest.Options{DSN: e.DSN(t), Orchestrators: 1, Toolrunners: 1, Orchestrator: cfg}))
				})
			}
		}
	}
}

func crashTurns(t *testing.T, c *crashes, s *systest.System) {
	t.Helper()
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
	// Tool progress goes live to the sockets, never through AGENT.
	want := map[string]int{add + " proposal": 1, yes + " answer": 1, hello + " answer": 1}
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
}
