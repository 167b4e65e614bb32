package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// answering is a model that answers every turn at once.
type answering struct{}

func (answering) Decide(context.Context, Prompt) (Decision, error) {
	return Decision{Kind: DecisionAnswer, Content: "Noted."}, nil
}

type quietRelay struct{}

func (quietRelay) Publish(context.Context, []store.OutboxMessage) error { return nil }
func (quietRelay) Flush(context.Context) error                          { return nil }

// keptLoads counts the loads that found the stored state unchanged, so
// that the state was not read.
type keptLoads struct {
	Store
	kept int
}

func (k *keptLoads) LoadConversationIfChanged(ctx context.Context, tenantID, userID, conversationID string, known int64) (store.Conversation, store.UserSettings, error) {
	c, u, err := k.Store.LoadConversationIfChanged(ctx, tenantID, userID, conversationID, known)
	if err == nil && c.State == nil {
		k.kept++
	}
	return c, u, err
}

// Two replicas take turns on one conversation, the first twice in a row:
// the first's second turn uses the state it saved (nothing read), and its
// third, after the other replica saved, reads the stored state instead of
// its own older copy. The conversation's history holds the other replica's message.
func TestAReplicasKeptStateYieldsToAnotherReplicasSave(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) { testKeptStateYields(t, storetest.Open(t, e.DSN(t))) })
	}
}

func testKeptStateYields(t *testing.T, st *store.Store) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	stores := []*keptLoads{{Store: st}, {Store: st}}
	var replicas []*Orchestrator
	for _, s := range stores {
		o := New(Config{}, s, quietRelay{}, nil, answering{}, prometheus.NewRegistry(), log, time.Now)
		t.Cleanup(o.stopLife)
		replicas = append(replicas, o)
	}
	ctx := context.Background()
	ref := convRef{tenant: "acme", user: "ann", id: "c1"}
	order := []int{0, 0, 1, 0}
	var want []string
	for i, r := range order {
		text := fmt.Sprintf("message %d", i)
		want = append(want, text)
		ev := Event{Kind: EvTurn, Turn: &contracts.UserTurn{TurnID: fmt.Sprintf("turn-%d", i), TenantID: ref.tenant, UserID: ref.user,
			Roles: []string{contracts.RoleOwner}, ConversationID: ref.id, Text: text}}
		if err := replicas[r].apply(ctx, ref, ev); err != nil {
			t.Fatalf("turn %d on replica %d: %v", i, r, err)
		}
	}
	if stores[0].kept != 1 || stores[1].kept != 0 {
		t.Errorf("loads that kept their state: %d and %d, want 1 (the first replica's second turn) and 0", stores[0].kept, stores[1].kept)
	}
	c, err := st.LoadConversation(ctx, ref.tenant, ref.user, ref.id)
	if err != nil {
		t.Fatal(err)
	}
	var s State
	if err := json.Unmarshal(c.State, &s); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range s.History {
		if e.Role == "user" {
			got = append(got, e.Text)
		}
	}
	// The history keeps the latest messages: the last two at least, the
	// other replica's among them.
	if len(got) < 2 || !slices.Equal(got, want[len(want)-len(got):]) || c.Version != int64(len(order)) {
		t.Fatalf("version %d with the person's messages %q, want %d ending with %q", c.Version, got, len(order), want[2:])
	}
}

// A kept state is shared with the model call that may still read it, so
// the decision that clears the call takes a turn of its own and leaves
// the kept one as it was.
func TestAdmittingADecisionLeavesTheKeptStateAsItWas(t *testing.T) {
	kept := State{Turn: &Turn{TurnID: "turn-1", Model: &ModelCall{ID: "call-1"}}}
	loaded := kept // what load hands the next event: the kept state itself
	o := &Orchestrator{}
	done, err := o.admit(context.Background(), convRef{"t1", "u1", "c1"}, store.Conversation{Version: 3}, &loaded,
		Event{Kind: EvDecision, ModelCall: "call-1"})
	if done || err != nil {
		t.Fatalf("admit = %v, %v; want the decision applied", done, err)
	}
	if loaded.Turn.Model != nil {
		t.Errorf("the loaded state still waits for call %q", loaded.Turn.Model.ID)
	}
	if kept.Turn.Model == nil || kept.Turn.Model.ID != "call-1" {
		t.Errorf("the kept state's call was changed in place: %+v", kept.Turn.Model)
	}
}
