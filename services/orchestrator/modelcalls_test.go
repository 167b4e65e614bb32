package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
	"github.com/purser-ai/purser/services/orchestrator/offline"
)

// heldModel is the offline model behind a gate: every call waits until
// the gate opens (or its context ends).
type heldModel struct {
	gate     chan struct{}
	once     sync.Once
	inFlight atomic.Int32
	calls    atomic.Int32
}

func newHeldModel() *heldModel { return &heldModel{gate: make(chan struct{})} }

func (m *heldModel) open() { m.once.Do(func() { close(m.gate) }) }

func (m *heldModel) Decide(ctx context.Context, p orchestrator.Prompt) (orchestrator.Decision, error) {
	m.calls.Add(1)
	m.inFlight.Add(1)
	defer m.inFlight.Add(-1)
	select {
	case <-m.gate:
	case <-ctx.Done():
		return orchestrator.Decision{}, ctx.Err()
	}
	return offline.Model{}.Decide(ctx, p)
}

// waitUntil polls cond for up to 30 s: the bound on a hang, not a speed claim.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// turnsPending is how many TURNS messages orchestrator consumers hold
// unacked or have not delivered yet.
func turnsPending(t *testing.T, s *systest.System) int {
	ctx := context.Background()
	n := 0
	for _, d := range bus.OrchestratorConsumers() {
		if d.Stream != bus.StreamTurns {
			continue
		}
		c, err := s.JS.Consumer(ctx, d.Stream, d.Name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := c.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n += info.NumAckPending + int(info.NumPending)
	}
	return n
}

// Turns waiting on a slow model hold no bus message: every user's call is
// in flight at once, while TURNS has nothing unacked; opening the model
// answers every one of them.
func TestModelCallsHoldNoMessage(t *testing.T) {
	model := newHeldModel()
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Model: model})
	const users = 20
	var us []*systest.User
	var turns []string
	for i := range users {
		u := s.User("acme", fmt.Sprintf("u%d", i))
		us = append(us, u)
		turns = append(turns, u.Say("hello"))
	}
	waitUntil(t, "every model call in flight", func() bool { return model.inFlight.Load() == users })
	waitUntil(t, "every turn acked while the model works", func() bool { return turnsPending(t, s) == 0 })
	model.open()
	for i, u := range us {
		systest.Expect[contracts.Answer](u, contracts.TypeAnswer, turns[i])
	}
	if n := model.calls.Load(); n != users {
		t.Errorf("%d model calls for %d turns, want one each", n, users)
	}
}

// A model call pending when its orchestrator went away is made by the
// next orchestrator to start on the same store: it finds the call in its
// first sweep and the turn gets its answer.
func TestPendingModelCallIsMadeAfterRestart(t *testing.T) {
	dsn := storetest.SQLiteDSN(t)
	// The first orchestrator's model never answers: it is as good as dead.
	dead := newHeldModel()
	first := systest.Start(t, systest.Options{DSN: dsn, Orchestrators: 1, Model: dead,
		Orchestrator: orchestrator.Config{ModelInlineWait: -1}})
	ann := first.User("acme", "ann")
	turn := ann.Say("hello")
	waitUntil(t, "the call stored as pending", func() bool {
		c, err := first.Store.LoadConversation(context.Background(), "acme", "ann", ann.Conversation)
		if err != nil {
			return false
		}
		var st orchestrator.State
		return json.Unmarshal(c.State, &st) == nil && st.Turn != nil && st.Turn.Model != nil
	})
	waitUntil(t, "the turn acked", func() bool { return turnsPending(t, first) == 0 })

	second := systest.Start(t, systest.Options{DSN: dsn, Orchestrators: 1})
	again := second.User("acme", "ann")
	a := systest.Expect[contracts.Answer](again, contracts.TypeAnswer, turn)
	if a.Content == "" {
		t.Fatalf("empty answer %+v", a)
	}
	dead.open() // the first one's late call finds the turn answered
	waitUntil(t, "the late call to return", func() bool { return dead.calls.Load() == 1 && dead.inFlight.Load() == 0 })
	first.Bus.Quiet(500 * time.Millisecond)
	if n := len(first.Bus.All(ann.Agent(contracts.TypeAnswer, turn))); n != 0 {
		t.Errorf("the late call answered the turn again")
	}
	c, err := second.Store.LoadConversation(context.Background(), "acme", "ann", ann.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	var st orchestrator.State
	if err := json.Unmarshal(c.State, &st); err != nil {
		t.Fatal(err)
	}
	answers := 0
	for _, e := range st.History {
		if e.TurnID == turn && e.Role == "assistant" {
			answers++
		}
	}
	if answers != 1 || st.Turn != nil {
		t.Fatalf("history holds %d answers to the turn (turn still running: %v), want 1", answers, st.Turn != nil)
	}
}

// flakyStore is an orchestrator's store whose conversation loads and
// saves fail while failing is above zero, each failure taking one off:
// the store briefly unavailable. (A decision within a turn may start
// from the state its replica kept, unread: then its save fails first.)
type flakyStore struct {
	orchestrator.Store
	failing atomic.Int32
	failed  atomic.Int32
}

func (f *flakyStore) fail() bool {
	if f.failing.Add(-1) >= 0 {
		f.failed.Add(1)
		return true
	}
	return false
}

func (f *flakyStore) LoadConversationIfChanged(ctx context.Context, tenantID, userID, conversationID string, known int64) (store.Conversation, store.UserSettings, error) {
	if f.fail() {
		return store.Conversation{}, store.UserSettings{}, errors.New("database is locked")
	}
	return f.Store.LoadConversationIfChanged(ctx, tenantID, userID, conversationID, known)
}

func (f *flakyStore) SaveTurn(ctx context.Context, t store.TurnChanges) (int64, error) {
	if f.fail() {
		return 0, errors.New("database is locked")
	}
	return f.Store.SaveTurn(ctx, t)
}

// A model's decision that cannot be applied at first, because the store
// fails for a moment, is applied again within seconds: the turn gets its
// answer without waiting out the pending call's lease (an hour here, so
// only the retry can answer it).
func TestDecisionAppliedAgainAfterAPassingFailure(t *testing.T) {
	model := newHeldModel()
	flaky := &flakyStore{}
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Model: model,
		Orchestrator:      orchestrator.Config{ModelInlineWait: -1, ModelLease: time.Hour},
		OrchestratorStore: func(st orchestrator.Store) orchestrator.Store { flaky.Store = st; return flaky }})
	ann := s.User("acme", "ann")
	turn := ann.Say("hello")
	waitUntil(t, "the call in flight", func() bool { return model.inFlight.Load() == 1 })
	waitUntil(t, "the turn acked", func() bool { return turnsPending(t, s) == 0 })
	flaky.failing.Store(3)
	model.open()
	a := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, turn)
	if a.Content == "" {
		t.Fatalf("empty answer %+v", a)
	}
	if n := flaky.failed.Load(); n != 3 {
		t.Fatalf("%d loads and saves failed, want the 3 made to fail", n)
	}
}
