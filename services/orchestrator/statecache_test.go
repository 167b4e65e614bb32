package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
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

// keptLoads counts the loads, and those that found the stored state
// unchanged, so that the state was not read.
type keptLoads struct {
	Store
	kept, loads int
}

func (k *keptLoads) LoadConversationIfChanged(ctx context.Context, tenantID, userID, conversationID string, known int64) (store.Conversation, store.UserSettings, error) {
	k.loads++
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

// twoReplicas is two orchestrators over one store, each counting its
// loads, both asking model.
func twoReplicas(t *testing.T, st *store.Store, model Model) ([]*keptLoads, []*Orchestrator) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	stores := []*keptLoads{{Store: st}, {Store: st}}
	var replicas []*Orchestrator
	for _, s := range stores {
		o := New(Config{}, s, quietRelay{}, nil, model, prometheus.NewRegistry(), log, time.Now)
		t.Cleanup(o.stopLife)
		replicas = append(replicas, o)
	}
	return stores, replicas
}

// turnEvent is ann's turn id saying text in ref.
func turnEvent(ref convRef, id, text string) Event {
	return Event{Kind: EvTurn, Turn: &contracts.UserTurn{TurnID: id, TenantID: ref.tenant, UserID: ref.user,
		Roles: []string{contracts.RoleOwner}, ConversationID: ref.id, Text: text}}
}

// storedState is ref's conversation as stored: its version and state.
func storedState(t *testing.T, st *store.Store, ref convRef) (int64, State) {
	t.Helper()
	c, err := st.LoadConversation(context.Background(), ref.tenant, ref.user, ref.id)
	if err != nil {
		t.Fatal(err)
	}
	var s State
	if err := json.Unmarshal(c.State, &s); err != nil {
		t.Fatal(err)
	}
	return c.Version, s
}

func testKeptStateYields(t *testing.T, st *store.Store) {
	stores, replicas := twoReplicas(t, st, answering{})
	ctx := context.Background()
	ref := convRef{tenant: "acme", user: "ann", id: "c1"}
	order := []int{0, 0, 1, 0}
	var want []string
	for i, r := range order {
		text := fmt.Sprintf("message %d", i)
		want = append(want, text)
		if err := replicas[r].apply(ctx, ref, turnEvent(ref, fmt.Sprintf("turn-%d", i), text)); err != nil {
			t.Fatalf("turn %d on replica %d: %v", i, r, err)
		}
	}
	if stores[0].kept != 1 || stores[1].kept != 0 {
		t.Errorf("loads that kept their state: %d and %d, want 1 (the first replica's second turn) and 0", stores[0].kept, stores[1].kept)
	}
	version, s := storedState(t, st, ref)
	var got []string
	for _, e := range s.History {
		if e.Role == "user" {
			got = append(got, e.Text)
		}
	}
	// The history keeps the latest messages: the last two at least, the
	// other replica's among them.
	if len(got) < 2 || !slices.Equal(got, want[len(want)-len(got):]) || version != int64(len(order)) {
		t.Fatalf("version %d with the person's messages %q, want %d ending with %q", version, got, len(order), want[2:])
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

// looking is a model that reads the person's expenses for a turn saying
// "look", then answers from what the read gave; it answers anything else
// at once.
type looking struct{}

func (looking) Decide(_ context.Context, p Prompt) (Decision, error) {
	if p.Text == "look" && len(p.Steps) == 0 {
		return Decision{Kind: DecisionToolCalls, Calls: []Call{{Tool: contracts.ToolListExpenses, Args: json.RawMessage(`{}`)}}}, nil
	}
	return Decision{Kind: DecisionAnswer, Content: fmt.Sprintf("Seen %d steps.", len(p.Steps))}, nil
}

// A tool's result starts from the state its replica kept, unread. When
// another replica moved the conversation on since (here: it started the
// turn that called the tool), the save at the kept version fails, and the
// result is applied again from the stored state: the turn ends with the
// tool's data, and nothing is lost.
func TestAResultOnAStaleKeptStateIsAppliedFromTheStoredOne(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) { testResultOnStaleKeptState(t, storetest.Open(t, e.DSN(t))) })
	}
}

func testResultOnStaleKeptState(t *testing.T, st *store.Store) {
	stores, replicas := twoReplicas(t, st, looking{})
	ctx := context.Background()
	ref := convRef{tenant: "acme", user: "ann", id: "c1"}
	turn := func(r int, id, text string) {
		t.Helper()
		if err := replicas[r].apply(ctx, ref, turnEvent(ref, id, text)); err != nil {
			t.Fatalf("%s on replica %d: %v", id, r, err)
		}
	}
	turn(0, "turn-0", "hello") // replica 0 keeps the state it saved
	turn(1, "turn-1", "look")  // replica 1 starts a turn that calls a tool
	_, s := storedState(t, st, ref)
	if s.Turn == nil || len(s.Turn.Open) != 1 {
		t.Fatalf("after the look turn: %+v, want one open call", s.Turn)
	}
	call := s.Turn.Open[0].CallID
	res := Event{Kind: EvToolResult, Result: &contracts.ToolResult{CallID: call, Tool: contracts.ToolListExpenses, OK: true, Data: json.RawMessage(`[]`)}}
	before := stores[0].loads
	if err := replicas[0].apply(ctx, ref, res); err != nil { // its kept state knows no such call
		t.Fatalf("result on replica 0: %v", err)
	}
	if n := stores[0].loads - before; n != 1 {
		t.Errorf("replica 0 read the conversation %d times for the result, want 1 (after its kept state's save failed)", n)
	}
	version, s := storedState(t, st, ref)
	if s.Turn != nil {
		t.Fatalf("the turn still runs after its tool's result: open calls %+v", s.Turn.Open)
	}
	if last := s.History[len(s.History)-1]; last.Text != "Seen 1 steps." {
		t.Fatalf("the turn ended with %q, want the answer from the tool's result", last.Text)
	}
	if version != 3 { // hello, look (its tool call made at once), the result once
		t.Errorf("version %d, want 3: the result was saved once", version)
	}
	// The result again (a redelivery) on the replica that applied it
	// changes nothing, and takes no read: its kept state is current.
	before = stores[0].loads
	if err := replicas[0].apply(ctx, ref, res); err != nil {
		t.Fatalf("redelivered result: %v", err)
	}
	if n := stores[0].loads - before; n != 0 {
		t.Errorf("replica 0 read the conversation %d times for a result within a turn it kept, want 0", n)
	}
	if v, s2 := storedState(t, st, ref); s2.Turn != nil || len(s2.History) != len(s.History) {
		t.Fatalf("a redelivered result changed the conversation: version %d, turn %+v", v, s2.Turn)
	}
}

// A model's decision that the kept state, unread, would drop (it knows no
// such call) is not dropped on its word: the conversation is read, and
// the stored state, which waits for the call, takes the decision.
func TestADecisionAKeptStateWouldDropIsCheckedAgainstTheStoredState(t *testing.T) {
	st := storetest.Open(t, storetest.Engines()[0].DSN(t))
	ks := &keptLoads{Store: st}
	o := New(Config{}, ks, quietRelay{}, nil, answering{}, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
	t.Cleanup(o.stopLife)
	ctx := context.Background()
	ref := convRef{tenant: "acme", user: "ann", id: "c1"}
	waiting := State{UserID: ref.user, Roles: []string{contracts.RoleOwner}, Timezone: "UTC",
		Turn: &Turn{TurnID: "turn-1", StartedAt: time.Now(), Text: "hello", Model: &ModelCall{ID: "call-1", Since: time.Now()}}}
	raw, err := json.Marshal(waiting)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.SaveConversation(ctx, store.Conversation{TenantID: ref.tenant, UserID: ref.user, ConversationID: ref.id, State: raw}, 0, nil); err != nil {
		t.Fatal(err)
	}
	// What this replica kept is older: no turn running.
	o.states.put(ref, cachedState{conv: store.Conversation{TenantID: ref.tenant, UserID: ref.user, ConversationID: ref.id, Version: 1},
		settings: store.UserSettings{TenantID: ref.tenant, UserID: ref.user}, state: State{UserID: ref.user}})
	ev := Event{Kind: EvDecision, ModelCall: "call-1", Decision: &Decision{Kind: DecisionAnswer, Content: "Hi."}}
	if err := o.apply(ctx, ref, ev); err != nil {
		t.Fatal(err)
	}
	if ks.loads != 1 {
		t.Errorf("%d reads, want 1: the drop is checked against the stored state", ks.loads)
	}
	version, s := storedState(t, st, ref)
	if s.Turn != nil || version != 2 || s.History[len(s.History)-1].Text != "Hi." {
		t.Fatalf("version %d, turn %+v, history %+v: want the decision applied to the stored turn", version, s.Turn, s.History)
	}
}

// tally is looking, counting the calls it is asked for each step of a
// turn (the person's text and the steps taken so far).
type tally struct {
	mu    sync.Mutex
	calls map[string]int
}

func (m *tally) Decide(ctx context.Context, p Prompt) (Decision, error) {
	m.mu.Lock()
	m.calls[fmt.Sprintf("%s after %d steps", p.Text, len(p.Steps))]++
	m.mu.Unlock()
	return looking{}.Decide(ctx, p)
}

func (m *tally) count(step string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[step]
}

// localTally is tally as a local model.
type localTally struct{ *tally }

func (localTally) Local() bool { return true }

// A tool's result that completes its turn on a kept state another replica
// has moved on since (the person wrote again while the tool ran) asks a
// remote model once, from the stored state: the kept state's version is
// checked before the call, which a stale state would pay for and stream
// to the person, then make again. A local model's call is made on the
// kept state and made again after the save fails: it costs only time.
func TestARemoteModelIsAskedOnceWhenTheKeptStateIsStale(t *testing.T) {
	for _, local := range []bool{false, true} {
		t.Run(fmt.Sprintf("local=%v", local), func(t *testing.T) {
			st := storetest.Open(t, storetest.SQLiteDSN(t))
			m := &tally{calls: map[string]int{}}
			var model Model = m
			if local {
				model = localTally{m}
			}
			_, replicas := twoReplicas(t, st, model)
			ctx := context.Background()
			ref := convRef{tenant: "acme", user: "ann", id: "c1"}
			if err := replicas[0].apply(ctx, ref, turnEvent(ref, "turn-0", "look")); err != nil {
				t.Fatal(err)
			}
			_, s := storedState(t, st, ref)
			if s.Turn == nil || len(s.Turn.Open) != 1 {
				t.Fatalf("after the look turn: %+v, want one open call", s.Turn)
			}
			// The person writes again while the tool runs; their turn's lane
			// is on the other replica now.
			if err := replicas[1].apply(ctx, ref, turnEvent(ref, "turn-1", "thanks")); err != nil {
				t.Fatal(err)
			}
			res := Event{Kind: EvToolResult, Result: &contracts.ToolResult{CallID: s.Turn.Open[0].CallID, TurnID: "turn-0",
				Tool: contracts.ToolListExpenses, OK: true, Data: json.RawMessage(`[]`)}}
			if err := replicas[0].apply(ctx, ref, res); err != nil {
				t.Fatal(err)
			}
			want := 1
			if local {
				want = 2 // once on the kept state, once on the stored one
			}
			if n := m.count("look after 1 steps"); n != want {
				t.Errorf("the model was asked %d times to answer from the tool's result, want %d", n, want)
			}
			_, s = storedState(t, st, ref)
			var answers []string
			for _, e := range s.History {
				if e.Role != "user" {
					answers = append(answers, e.Text)
				}
			}
			if !slices.Contains(answers, "Seen 1 steps.") || m.count("thanks after 0 steps") != 1 {
				t.Fatalf("answers %q, the waiting turn asked %d times: want the tool's answer, then the waiting turn's, once",
					answers, m.count("thanks after 0 steps"))
			}
		})
	}
}

// localEcho is a local model that answers with the currency its prompt
// was given.
type localEcho struct{}

func (localEcho) Decide(_ context.Context, p Prompt) (Decision, error) {
	return Decision{Kind: DecisionAnswer, Content: "in " + p.Currency}, nil
}

func (localEcho) Local() bool { return true }

// On SQLite, which one process owns, a new turn starts from the state its
// process kept without reading the conversation, while the user's
// settings are the ones kept with it; once they change, the next turn
// reads them and answers with them. On Postgres every new turn reads.
func TestANewTurnTakesTheKeptStateWhileTheSettingsStand(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			st := storetest.Open(t, e.DSN(t))
			stores, replicas := twoReplicas(t, st, localEcho{})
			o, loads := replicas[0], stores[0]
			ctx := context.Background()
			ref := convRef{tenant: "acme", user: "ann", id: "c1"}
			turn := func(i int) string {
				t.Helper()
				if err := o.apply(ctx, ref, turnEvent(ref, fmt.Sprintf("turn-%d", i), "how much?")); err != nil {
					t.Fatalf("turn %d: %v", i, err)
				}
				_, s := storedState(t, st, ref)
				return s.History[len(s.History)-1].Text
			}
			if got := turn(0); got != "in GBP" {
				t.Fatalf("first answer %q, want the default currency", got)
			}
			read := loads.loads
			turn(1)
			turn(2)
			_, oneProcess := st.SettingsEpoch(ref.tenant, ref.user)
			if want := map[bool]int{true: 0, false: 2}[oneProcess]; loads.loads-read != want {
				t.Errorf("two more turns read the conversation %d times, want %d (SettingsEpoch known: %v)", loads.loads-read, want, oneProcess)
			}
			if _, err := st.PutUserSettings(ctx, store.UserSettings{TenantID: ref.tenant, UserID: ref.user, Currency: "EUR"}); err != nil {
				t.Fatal(err)
			}
			read = loads.loads
			if got := turn(3); got != "in EUR" {
				t.Fatalf("the answer after the settings changed is %q, want it in EUR", got)
			}
			if loads.loads-read != 1 {
				t.Errorf("the turn after the settings changed read the conversation %d times, want 1", loads.loads-read)
			}
			// Settings changed inside another transaction (as the
			// set_preferences tool does) count too.
			if err := st.InTx(ctx, func(tx *store.Store) error {
				_, err := tx.PutUserSettings(ctx, store.UserSettings{TenantID: ref.tenant, UserID: ref.user, Currency: "JPY"})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if got := turn(4); got != "in JPY" {
				t.Fatalf("the answer after the settings changed in a transaction is %q, want it in JPY", got)
			}
		})
	}
}
