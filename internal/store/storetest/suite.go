package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
)

// Run runs the conformance suite against stores made by open, each test on
// a fresh, empty database.
func Run(t *testing.T, open func(t *testing.T) *store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, st *store.Store)
	}{
		{"ConversationVersions", testConversationVersions},
		{"ConversationRaceOneWins", testConversationRace},
		{"ConversationWithItsOwnersSettings", testConversationWithSettings},
		{"ConversationsPerUser", testConversationsPerUser},
		{"OutboxOnceAndInOrder", testOutbox},
		{"ProposalLifecycle", testProposals},
		{"ProposalApproveRace", testProposalRace},
		{"TurnSavedOnceWithItsProposals", testSaveTurn},
		{"ExpensesScopedToTenantAndUser", testExpenses},
		{"ContentErrorsArePermanent", testContentErrors},
		{"ExpenseIDsUnderConcurrency", testExpenseIDs},
		{"ExpenseIDsPerUser", testExpenseIDsPerUser},
		{"TransactionsDedupeAndFilter", testTransactions},
		{"DocumentsDedupeBySHA", testDocuments},
		{"NotificationsInbox", testNotifications},
		{"FramesSeqAndResume", testFrames},
		{"FramesConcurrentSameEvent", testFramesRace},
		{"ConversationsAndTheirHistory", testConversationHistory},
		{"UserMessageTitlesItsConversation", testUserMessage},
		{"AuditAndToolCalls", testAuditToolCalls},
		{"AuditOfOneUser", testUserAudit},
		{"InTxRollsBack", testInTx},
		{"MailTokens", testMailTokens},
		{"LedgerSummaryPerCurrency", testLedgerSummary},
		{"LedgerPagesEveryEntryOnce", testLedgerPaging},
		{"ImportsAddOnlyWhatIsNew", testImportsAddOnlyWhatIsNew},
		{"ImportsKeepGenuineRepeats", testImportsKeepGenuineRepeats},
		{"ImportsAtOnceAddTheMonthOnce", testImportsAtOnceAddTheMonthOnce},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

var (
	ctx = context.Background()
	t0  = time.Date(2026, 11, 22, 9, 30, 15, 123456000, time.UTC)
)

// must turns a (value, error) result into the value, failing the test on error:
// must(st.GetExpense(ctx, "t", 1))(t).
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}

func testConversationVersions(t *testing.T, st *store.Store) {
	_, err := st.LoadConversation(ctx, "t1", "u1", "c1")
	wantErr(t, err, store.ErrNotFound)

	c := store.Conversation{TenantID: "t1", ConversationID: "c1", UserID: "u1", State: json.RawMessage(`{"n":1}`), UpdatedAt: t0}
	out := []store.OutboxMessage{{ID: "m1", Subject: "purser.agent.t1.c1", Headers: map[string]string{"Purser-Turn-Id": "x"}, Payload: []byte(`{}`), CreatedAt: t0}}
	v := must(st.SaveConversation(ctx, c, 0, out))(t)
	if v != 1 {
		t.Fatalf("first version = %d, want 1", v)
	}
	// A second insert of the same conversation loses and writes nothing.
	_, err = st.SaveConversation(ctx, c, 0, []store.OutboxMessage{{ID: "m-lost", Subject: "s", Payload: []byte("x")}})
	wantErr(t, err, store.ErrConflict)

	got := must(st.LoadConversation(ctx, "t1", "u1", "c1"))(t)
	want := store.Conversation{TenantID: "t1", ConversationID: "c1", UserID: "u1", Version: 1, State: json.RawMessage(`{"n":1}`), UpdatedAt: t0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("loaded conversation (-want +got):\n%s", diff)
	}
	got.State = json.RawMessage(`{"n":2}`)
	v = must(st.SaveConversation(ctx, got, 1, nil))(t)
	if v != 2 {
		t.Fatalf("second version = %d, want 2", v)
	}
	// A stale writer (still at version 1) is refused.
	_, err = st.SaveConversation(ctx, got, 1, []store.OutboxMessage{{ID: "m-stale", Subject: "s", Payload: []byte("x")}})
	wantErr(t, err, store.ErrConflict)

	pending := must(st.PendingOutbox(ctx, 10))(t)
	if len(pending) != 1 || pending[0].ID != "m1" || pending[0].Headers["Purser-Turn-Id"] != "x" {
		t.Fatalf("outbox holds %+v, want only m1 with its header: a lost save must not queue messages", pending)
	}
	// A running turn's deadline makes the conversation due once it passes.
	due := t0.Add(2 * time.Minute)
	got = must(st.LoadConversation(ctx, "t1", "u1", "c1"))(t)
	got.DeadlineAt = &due
	must(st.SaveConversation(ctx, got, 2, nil))(t)
	if n := len(must(st.DueConversations(ctx, due, 10))(t)); n != 0 {
		t.Fatalf("%d conversations due at their deadline, want 0 until it passes", n)
	}
	list := must(st.DueConversations(ctx, due.Add(time.Second), 10))(t)
	if len(list) != 1 || list[0].ConversationID != "c1" || list[0].TenantID != "t1" || list[0].Version != 3 {
		t.Fatalf("due = %+v", list)
	}
	got = must(st.LoadConversation(ctx, "t1", "u1", "c1"))(t)
	if got.DeadlineAt == nil || !got.DeadlineAt.Equal(due) {
		t.Fatalf("deadline = %v", got.DeadlineAt)
	}
	got.DeadlineAt = nil
	must(st.SaveConversation(ctx, got, 3, nil))(t)
	if n := len(must(st.DueConversations(ctx, due.Add(time.Hour), 10))(t)); n != 0 {
		t.Fatalf("a finished turn is still due (%d)", n)
	}
	// Another tenant's conversation with the same id is a different row.
	_, err = st.LoadConversation(ctx, "t2", "u1", "c1")
	wantErr(t, err, store.ErrNotFound)
}

// Two users of a tenant who use the same conversation id each have a
// conversation of their own: neither finds, overwrites nor versions the
// other's, and the sweep sees each with its user.
func testConversationsPerUser(t *testing.T, st *store.Store) {
	olga := store.Conversation{TenantID: "t1", UserID: "olga", ConversationID: "chat-olga", State: json.RawMessage(`{"who":"olga"}`), UpdatedAt: t0}
	bob := olga
	bob.UserID, bob.State = "bob", json.RawMessage(`{"who":"bob"}`)
	due := t0.Add(time.Minute)
	bob.DeadlineAt = &due

	must(st.SaveConversation(ctx, bob, 0, nil))(t)
	_, err := st.LoadConversation(ctx, "t1", "olga", "chat-olga")
	wantErr(t, err, store.ErrNotFound) // bob's is not olga's
	_, _, err = st.LoadConversationIfChanged(ctx, "t1", "olga", "chat-olga", 0)
	wantErr(t, err, store.ErrNotFound)
	if v := must(st.SaveConversation(ctx, olga, 0, nil))(t); v != 1 {
		t.Fatalf("olga's first version after bob wrote the same id = %d, want 1", v)
	}
	gotBob := must(st.LoadConversation(ctx, "t1", "bob", "chat-olga"))(t)
	gotBob.State = json.RawMessage(`{"who":"bob","n":2}`)
	must(st.SaveConversation(ctx, gotBob, 1, nil))(t)
	// Olga's save at her version 1 is not refused by bob's version 2.
	gotOlga := must(st.LoadConversation(ctx, "t1", "olga", "chat-olga"))(t)
	gotOlga.State = json.RawMessage(`{"who":"olga","n":2}`)
	must(st.SaveConversation(ctx, gotOlga, 1, nil))(t)

	for _, tt := range []struct {
		give, want string
	}{{"olga", `{"who":"olga","n":2}`}, {"bob", `{"who":"bob","n":2}`}} {
		got := must(st.LoadConversation(ctx, "t1", tt.give, "chat-olga"))(t)
		if got.UserID != tt.give || got.Version != 2 || string(got.State) != tt.want {
			t.Errorf("%s's conversation = %+v (state %s), want version 2 and %s", tt.give, got, got.State, tt.want)
		}
	}
	list := must(st.DueConversations(ctx, due.Add(time.Second), 10))(t)
	if len(list) != 1 || list[0].UserID != "bob" || list[0].ConversationID != "chat-olga" {
		t.Fatalf("due = %+v, want bob's alone", list)
	}
	users := must(st.ConversationUsers(ctx, "t1", "chat-olga", 10))(t)
	slices.Sort(users)
	if fmt.Sprint(users) != "[bob olga]" {
		t.Fatalf("users of chat-olga = %v, want [bob olga]", users)
	}
	if users := must(st.ConversationUsers(ctx, "t2", "chat-olga", 10))(t); len(users) != 0 {
		t.Fatalf("users of another tenant's chat-olga = %v, want none", users)
	}
	_, err = st.SaveConversation(ctx, store.Conversation{TenantID: "t1", ConversationID: "c9", State: json.RawMessage(`{}`)}, 0, nil)
	if err == nil {
		t.Fatal("a conversation without a user was saved")
	}
}

func testConversationRace(t *testing.T, st *store.Store) {
	c := store.Conversation{TenantID: "t1", ConversationID: "c1", UserID: "u1", State: json.RawMessage(`{}`)}
	must(st.SaveConversation(ctx, c, 0, nil))(t)
	c.Version = 1
	const writers = 8
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := c
			c.State = json.RawMessage(fmt.Sprintf(`{"w":%d}`, i))
			_, errs[i] = st.SaveConversation(ctx, c, 1, []store.OutboxMessage{{ID: fmt.Sprintf("m%d", i), Subject: "s", Payload: []byte("x")}})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d writers won the same version, want exactly 1", won)
	}
	if n := len(must(st.PendingOutbox(ctx, 100))(t)); n != 1 {
		t.Fatalf("outbox holds %d messages, want 1 (only the winner's)", n)
	}
}

// A conversation is read with the settings of the user it belongs to:
// empty ones while they set nothing, theirs once they do, never another
// user's.
func testConversationWithSettings(t *testing.T, st *store.Store) {
	_, _, err := st.LoadConversationIfChanged(ctx, "t1", "u1", "none", 0)
	wantErr(t, err, store.ErrNotFound)
	must(st.SaveConversation(ctx, store.Conversation{TenantID: "t1", ConversationID: "c1", UserID: "u1", State: json.RawMessage(`{}`), UpdatedAt: t0}, 0, nil))(t)
	must(st.PutUserSettings(ctx, store.UserSettings{TenantID: "t1", UserID: "u2", Currency: "JPY", UpdatedAt: t0}))(t)
	c, set := must2(st.LoadConversationIfChanged(ctx, "t1", "u1", "c1", 0))(t)
	if c.UserID != "u1" || c.Version != 1 || set != (store.UserSettings{TenantID: "t1", UserID: "u1"}) {
		t.Fatalf("before u1 set anything: %+v with %+v", c, set)
	}
	must(st.PutUserSettings(ctx, store.UserSettings{TenantID: "t1", UserID: "u1", Currency: "EUR", Timezone: "Europe/Paris", DateOrder: "dmy", Language: "fr", UpdatedAt: t0}))(t)
	_, set = must2(st.LoadConversationIfChanged(ctx, "t1", "u1", "c1", 0))(t)
	want := must(st.GetUserSettings(ctx, "t1", "u1"))(t)
	if set != want || set.Currency != "EUR" || set.Language != "fr" {
		t.Fatalf("settings read with the conversation %+v, want u1's %+v", set, want)
	}
	// A reader that holds version 1's state gets the settings and the
	// version without the state; once the state changes, with it.
	c, set = must2(st.LoadConversationIfChanged(ctx, "t1", "u1", "c1", 1))(t)
	if c.Version != 1 || c.State != nil || set != want {
		t.Fatalf("known version 1: version %d, state %q, settings %+v", c.Version, c.State, set)
	}
	c.State = json.RawMessage(`{"n":2}`)
	must(st.SaveConversation(ctx, c, 1, nil))(t)
	c, _ = must2(st.LoadConversationIfChanged(ctx, "t1", "u1", "c1", 1))(t)
	if c.Version != 2 || string(c.State) != `{"n":2}` {
		t.Fatalf("after a save, known version 1: version %d, state %q", c.Version, c.State)
	}
}

func testOutbox(t *testing.T, st *store.Store) {
	var msgs []store.OutboxMessage
	for i := range 5 {
		msgs = append(msgs, store.OutboxMessage{ID: fmt.Sprintf("m%d", i), Subject: "purser.notify.t.u", Payload: []byte{byte(i)}, CreatedAt: t0})
	}
	check(t, st.AppendOutbox(ctx, msgs))
	check(t, st.AppendOutbox(ctx, msgs[:2])) // replay: no duplicates
	pending := must(st.PendingOutbox(ctx, 3))(t)
	var ids []string
	for _, m := range pending {
		ids = append(ids, m.ID)
	}
	if diff := cmp.Diff([]string{"m0", "m1", "m2"}, ids); diff != "" {
		t.Fatalf("pending (-want +got):\n%s", diff)
	}
	check(t, st.MarkPublished(ctx, []string{"m0", "m1"}, t0))
	check(t, st.MarkPublished(ctx, []string{"m0"}, t0.Add(time.Hour)))
	pending = must(st.PendingOutbox(ctx, 10))(t)
	if len(pending) != 3 || pending[0].ID != "m2" || pending[0].Payload[0] != 2 {
		t.Fatalf("after publishing two, pending = %+v", pending)
	}
	n := must(st.PruneOutbox(ctx, t0.Add(time.Minute)))(t)
	if n != 2 {
		t.Fatalf("pruned %d, want the 2 published before the cutoff", n)
	}

	// A busy day's worth: more rows than one pass takes, behind the three
	// never published, then rows published after the cutoff.
	var old, young []string
	var more []store.OutboxMessage
	for i := range 2500 {
		old = append(old, fmt.Sprintf("old%d", i))
		more = append(more, store.OutboxMessage{ID: old[i], Subject: "purser.notify.t.u", Payload: []byte("x"), CreatedAt: t0})
	}
	for i := range 10 {
		young = append(young, fmt.Sprintf("young%d", i))
		more = append(more, store.OutboxMessage{ID: young[i], Subject: "purser.notify.t.u", Payload: []byte("y"), CreatedAt: t0})
	}
	check(t, st.AppendOutbox(ctx, more))
	check(t, st.MarkPublished(ctx, old, t0.Add(time.Minute)))
	check(t, st.MarkPublished(ctx, young, t0.Add(3*time.Hour)))
	if n := must(st.PruneOutbox(ctx, t0.Add(time.Hour)))(t); n != 2500 {
		t.Fatalf("pruned %d, want the 2,500 published before the cutoff", n)
	}
	if pending := must(st.PendingOutbox(ctx, 10))(t); len(pending) != 3 || pending[0].ID != "m2" {
		t.Fatalf("pruning touched the unpublished: pending = %+v", pending)
	}
	if n := must(st.PruneOutbox(ctx, t0.Add(4*time.Hour)))(t); n != 10 {
		t.Fatalf("pruned %d later, want the 10 published after the first cutoff", n)
	}
}

func proposal(tenant, id string) store.Proposal {
	return store.Proposal{ID: id, TenantID: tenant, UserID: "u1", ConversationID: "c1", TurnID: "turn1", Tool: "add_expense",
		Args: json.RawMessage(`{"amount":"200.00","item":"electricity bill"}`), Summary: "Add expense 'electricity bill' £200.00?",
		Status: store.ProposalPending, Revision: 1, ExpiresAt: t0.Add(15 * time.Minute), CreatedAt: t0}
}

func testProposals(t *testing.T, st *store.Store) {
	p := proposal("t1", "p1")
	check(t, st.CreateProposal(ctx, p))
	q := p
	q.Args = json.RawMessage(`{"amount":"1.00","item":"other"}`)
	wantErr(t, st.CreateProposal(ctx, q), store.ErrConflict)

	got := must(st.GetProposal(ctx, "t1", "p1"))(t)
	if diff := cmp.Diff(p, got); diff != "" {
		t.Fatalf("stored proposal (-want +got):\n%s", diff)
	}
	_, err := st.GetProposal(ctx, "t2", "p1")
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, st.TransitionProposal(ctx, "t2", "p1", "pending", "approved", t0), store.ErrNotFound)

	check(t, st.TransitionProposal(ctx, "t1", "p1", "pending", "approved", t0.Add(time.Minute)))
	wantErr(t, st.TransitionProposal(ctx, "t1", "p1", "pending", "approved", t0), store.ErrConflict)
	check(t, st.TransitionProposal(ctx, "t1", "p1", "approved", "executed", t0.Add(2*time.Minute)))
	wantErr(t, st.TransitionProposal(ctx, "t1", "p1", "approved", "executed", t0), store.ErrConflict)
	got = must(st.GetProposal(ctx, "t1", "p1"))(t)
	if got.Status != "executed" || got.DecidedAt == nil || !got.DecidedAt.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("after execution: status %q decided %v", got.Status, got.DecidedAt)
	}
	// A proposal a newer one replaced is superseded, a status of its own.
	sup := proposal("t1", "p3")
	check(t, st.CreateProposal(ctx, sup))
	check(t, st.TransitionProposal(ctx, "t1", "p3", store.ProposalPending, store.ProposalSuperseded, t0))
	if got := must(st.GetProposal(ctx, "t1", "p3"))(t); got.Status != store.ProposalSuperseded {
		t.Fatalf("replaced proposal is %q, want superseded", got.Status)
	}
	bad := proposal("t1", "p2")
	bad.Status = "maybe"
	if err := st.CreateProposal(ctx, bad); err == nil {
		t.Fatal("a proposal with an unknown status was stored")
	}
}

func testProposalRace(t *testing.T, st *store.Store) {
	check(t, st.CreateProposal(ctx, proposal("t1", "p1")))
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := st.TransitionProposal(ctx, "t1", "p1", "pending", "approved", t0)
			if err != nil && !errors.Is(err, store.ErrConflict) {
				t.Errorf("approve: %v", err)
			}
			if err == nil {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d concurrent approvals succeeded, want 1", won)
	}
}

func testSaveTurn(t *testing.T, st *store.Store) {
	check(t, st.CreateProposal(ctx, proposal("t1", "p-old")))
	c := store.Conversation{TenantID: "t1", ConversationID: "c1", UserID: "u1", State: json.RawMessage(`{"n":1}`), UpdatedAt: t0}
	turn := store.TurnChanges{
		Conversation:    c,
		Outbox:          []store.OutboxMessage{{ID: "m1", Subject: "purser.agent.t1.u1.c1", Payload: []byte(`{}`), CreatedAt: t0}},
		NewProposals:    []store.Proposal{proposal("t1", "p-new")},
		ProposalChanges: []store.ProposalChange{{ID: "p-old", From: "pending", To: "expired"}, {ID: "p-gone", From: "pending", To: "expired"}},
		At:              t0.Add(time.Minute),
	}
	if v := must(st.SaveTurn(ctx, turn))(t); v != 1 {
		t.Fatalf("version = %d, want 1", v)
	}
	if got := must(st.GetProposal(ctx, "t1", "p-new"))(t); got.Status != "pending" {
		t.Fatalf("new proposal status = %q, want pending", got.Status)
	}
	old := must(st.GetProposal(ctx, "t1", "p-old"))(t)
	if old.Status != "expired" || old.DecidedAt == nil || !old.DecidedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("changed proposal: status %q decided %v, want expired at %v", old.Status, old.DecidedAt, t0.Add(time.Minute))
	}

	// The same changes again (a redelivered event) lose only the
	// conversation's version check: the proposal writes are idempotent.
	_, err := st.SaveTurn(ctx, turn)
	wantErr(t, err, store.ErrConflict)
	turn.Conversation.Version = 1
	turn.Outbox = []store.OutboxMessage{{ID: "m2", Subject: "purser.agent.t1.u1.c1", Payload: []byte(`{}`), CreatedAt: t0}}
	if v := must(st.SaveTurn(ctx, turn))(t); v != 2 {
		t.Fatalf("version after the repeat = %d, want 2", v)
	}
	if n := len(must(st.PendingOutbox(ctx, 10))(t)); n != 2 {
		t.Fatalf("outbox holds %d messages, want 2", n)
	}

	// A proposal decided otherwise meanwhile is a conflict, and the
	// conversation is not written.
	check(t, st.TransitionProposal(ctx, "t1", "p-new", "pending", "rejected", t0))
	next := store.TurnChanges{Conversation: must(st.LoadConversation(ctx, "t1", "u1", "c1"))(t),
		ProposalChanges: []store.ProposalChange{{ID: "p-new", From: "pending", To: "approved"}},
		Outbox:          []store.OutboxMessage{{ID: "m-lost", Subject: "purser.agent.t1.u1.c1", Payload: []byte(`{}`), CreatedAt: t0}}}
	_, err = st.SaveTurn(ctx, next)
	wantErr(t, err, store.ErrConflict)
	if got := must(st.LoadConversation(ctx, "t1", "u1", "c1"))(t); got.Version != 2 {
		t.Fatalf("version after a conflicting proposal = %d, want 2", got.Version)
	}
	for _, m := range must(st.PendingOutbox(ctx, 10))(t) {
		if m.ID == "m-lost" {
			t.Fatal("a turn whose proposal change conflicted queued its messages")
		}
	}
}

func expense(tenant, user, item string, minor int64, date string) store.Expense {
	return store.Expense{TenantID: tenant, UserID: user, Item: item, AmountMinor: minor, Currency: "GBP", Date: date, Category: "bills", CreatedAt: t0}
}

func testExpenses(t *testing.T, st *store.Store) {
	a1 := must(st.AddExpense(ctx, expense("ta", "u1", "electricity", 20000, "2026-11-01")))(t)
	a2 := must(st.AddExpense(ctx, expense("ta", "u1", "coffee", 350, "2026-11-20")))(t)
	b1 := must(st.AddExpense(ctx, expense("tb", "u9", "rent", 100000, "2026-11-02")))(t)
	if a1.ID != 1 || a2.ID != 2 || b1.ID != 1 {
		t.Fatalf("ids = %d, %d, %d; want per-user numbering 1, 2 and 1", a1.ID, a2.ID, b1.ID)
	}
	if !a1.UpdatedAt.Equal(t0) {
		t.Fatalf("updated_at = %v, want created time", a1.UpdatedAt)
	}
	got := must(st.GetExpense(ctx, "ta", "u1", 1))(t)
	if diff := cmp.Diff(a1, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	// Tenant B's id 1 is not tenant A's id 1, whatever the caller asks for.
	if got := must(st.GetExpense(ctx, "tb", "u9", 1))(t); got.Item != "rent" {
		t.Fatalf("tenant b's expense 1 = %q", got.Item)
	}
	_, err := st.GetExpense(ctx, "tb", "u9", 2)
	wantErr(t, err, store.ErrNotFound)
	foreign := a2
	foreign.TenantID = "tb"
	_, err = st.UpdateExpense(ctx, foreign)
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, st.DeleteExpense(ctx, "tb", "u1", 2), store.ErrNotFound)

	// Another user of the same tenant can neither see, change nor delete
	// u1's expense, and u1's row is untouched by the attempts.
	_, err = st.GetExpense(ctx, "ta", "u2", 2)
	wantErr(t, err, store.ErrNotFound)
	otherUser := a2
	otherUser.UserID, otherUser.AmountMinor = "u2", 1
	_, err = st.UpdateExpense(ctx, otherUser)
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, st.DeleteExpense(ctx, "ta", "u2", 2), store.ErrNotFound)
	if n := len(must(st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "ta", UserID: "u2"}))(t)); n != 0 {
		t.Fatalf("u2 lists %d of u1's expenses", n)
	}
	if got := must(st.GetExpense(ctx, "ta", "u1", 2))(t); got.AmountMinor != 350 {
		t.Fatalf("u1's expense changed by u2: %+v", got)
	}
	_, err = st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "ta"})
	if err == nil {
		t.Fatal("a listing without a user was allowed")
	}

	a2.AmountMinor, a2.Item, a2.UpdatedAt = 400, "flat white", t0.Add(time.Hour)
	up := must(st.UpdateExpense(ctx, a2))(t)
	if up.AmountMinor != 400 || up.Item != "flat white" || !up.CreatedAt.Equal(t0) || !up.UpdatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("updated = %+v", up)
	}
	list := must(st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "ta", UserID: "u1", From: "2026-11-10", To: "2026-11-30"}))(t)
	if len(list) != 1 || list[0].ID != 2 {
		t.Fatalf("range list = %+v, want only #2", list)
	}
	if n := len(must(st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "ta", UserID: "u1"}))(t)); n != 2 {
		t.Fatalf("tenant a lists %d, want 2", n)
	}
	if n := len(must(st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "ta", UserID: "u1", Limit: 1}))(t)); n != 1 {
		t.Fatalf("limit 1 lists %d", n)
	}
	check(t, st.DeleteExpense(ctx, "ta", "u1", 1))
	wantErr(t, st.DeleteExpense(ctx, "ta", "u1", 1), store.ErrNotFound)
	// Ids are never reused after a delete.
	if a3 := must(st.AddExpense(ctx, expense("ta", "u1", "tea", 200, "2026-11-21")))(t); a3.ID != 3 {
		t.Fatalf("id after delete = %d, want 3", a3.ID)
	}
}

// Two users of one tenant adding at once each get 1..n, whatever the
// other does.
func testExpenseIDs(t *testing.T, st *store.Store) {
	const n = 20
	users := []string{"u1", "u2"}
	var wg sync.WaitGroup
	ids := make([][]int64, len(users))
	for u, user := range users {
		ids[u] = make([]int64, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e, err := st.AddExpense(ctx, expense("ta", user, "x", 1, "2026-11-01"))
				if err != nil {
					t.Errorf("add: %v", err)
					return
				}
				ids[u][i] = e.ID
			}()
		}
	}
	wg.Wait()
	for u, user := range users {
		seen := map[int64]bool{}
		for _, id := range ids[u] {
			if id < 1 || id > n || seen[id] {
				t.Fatalf("%s's ids %v: want each of 1..%d exactly once", user, ids[u], n)
			}
			seen[id] = true
		}
	}
}

// Expense ids count per user: a member's numbers say nothing of how many
// expenses anyone else of the tenant made, and the same number names each
// user's own expense, never another's.
func testExpenseIDsPerUser(t *testing.T, st *store.Store) {
	var olga, bob []int64
	for i, who := range []string{"olga", "olga", "bob", "olga", "olga", "bob"} {
		e := must(st.AddExpense(ctx, expense("ta", who, fmt.Sprintf("%s-%d", who, i), int64(100+i), "2026-11-01")))(t)
		if who == "olga" {
			olga = append(olga, e.ID)
		} else {
			bob = append(bob, e.ID)
		}
	}
	if got, want := fmt.Sprint(olga, bob), "[1 2 3 4] [1 2]"; got != want {
		t.Fatalf("olga's and bob's ids = %s, want %s: each counts their own", got, want)
	}
	// Another tenant's numbering is apart as well.
	if e := must(st.AddExpense(ctx, expense("tb", "olga", "elsewhere", 1, "2026-11-01")))(t); e.ID != 1 {
		t.Fatalf("olga's first expense in another tenant = #%d, want #1", e.ID)
	}

	// Bob's #1 is his own; olga's #3 and #4 are out of his reach.
	if got := must(st.GetExpense(ctx, "ta", "bob", 1))(t); got.Item != "bob-2" || got.UserID != "bob" {
		t.Fatalf("bob's #1 = %+v, want his own bob-2", got)
	}
	_, err := st.GetExpense(ctx, "ta", "bob", 3)
	wantErr(t, err, store.ErrNotFound)
	_, err = st.UpdateExpense(ctx, store.Expense{TenantID: "ta", UserID: "bob", ID: 4, Item: "mine now", AmountMinor: 1, Currency: "GBP", Date: "2026-11-01"})
	wantErr(t, err, store.ErrNotFound)
	wantErr(t, st.DeleteExpense(ctx, "ta", "bob", 3), store.ErrNotFound)

	// Bob changing and deleting his #1 and #2 leaves olga's #1 and #2.
	up := must(st.UpdateExpense(ctx, store.Expense{TenantID: "ta", UserID: "bob", ID: 1, Item: "bob-changed", AmountMinor: 9, Currency: "GBP", Date: "2026-11-02"}))(t)
	if up.Item != "bob-changed" || up.UserID != "bob" {
		t.Fatalf("bob's update = %+v", up)
	}
	check(t, st.DeleteExpense(ctx, "ta", "bob", 2))
	list := must(st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "ta", UserID: "olga"}))(t)
	var items []string
	for _, e := range list {
		items = append(items, fmt.Sprintf("#%d %s %d", e.ID, e.Item, e.AmountMinor))
	}
	if got, want := fmt.Sprint(items), "[#1 olga-0 100 #2 olga-1 101 #3 olga-3 103 #4 olga-4 104]"; got != want {
		t.Fatalf("olga's expenses after bob's changes = %s, want %s", got, want)
	}
	// Ids are never given again after a delete, and bob's next number
	// follows his own last one.
	if e := must(st.AddExpense(ctx, expense("ta", "bob", "bob-again", 1, "2026-11-03")))(t); e.ID != 3 {
		t.Fatalf("bob's next id = %d, want 3", e.ID)
	}
}

func testTransactions(t *testing.T, st *store.Store) {
	txs := []store.Transaction{
		{TenantID: "t1", UserID: "u1", DocumentID: "d1", Date: "2026-09-01", AmountMinor: -1299, Currency: "GBP", Description: "TESCO STORES 1234", Vendor: "Tesco", Category: "groceries", FITID: "F1", DedupeKey: "F1", ReviewStatus: store.ReviewOK},
		{TenantID: "t1", UserID: "u1", DocumentID: "d1", Date: "2026-09-03", AmountMinor: -4500, Currency: "GBP", Description: "100%_DISCOUNT SHOP", Vendor: "", Category: "shopping", DedupeKey: "h2", ReviewStatus: store.ReviewNeeds},
		{TenantID: "t1", UserID: "u1", DocumentID: "d1", Date: "2026-10-01", AmountMinor: 250000, Currency: "GBP", Description: "SALARY", Vendor: "Acme", Category: "income", DedupeKey: "h3", ReviewStatus: store.ReviewOK},
	}
	if n := must(st.InsertTransactions(ctx, txs))(t); n != 3 {
		t.Fatalf("inserted %d, want 3", n)
	}
	if n := must(st.InsertTransactions(ctx, txs[:2]))(t); n != 0 {
		t.Fatalf("re-import inserted %d, want 0", n)
	}
	other := txs[0]
	other.TenantID = "t2"
	if n := must(st.InsertTransactions(ctx, []store.Transaction{other}))(t); n != 1 {
		t.Fatalf("another tenant's identical transaction inserted %d, want 1", n)
	}
	if ok := must(st.HasTransaction(ctx, "t1", "u1", "F1"))(t); !ok {
		t.Fatal("HasTransaction misses F1")
	}
	cases := []struct {
		f    store.TransactionFilter
		want []string
	}{
		{store.TransactionFilter{}, []string{"F1", "h2", "h3"}},
		{store.TransactionFilter{Vendor: "tesco"}, []string{"F1"}},
		{store.TransactionFilter{Vendor: "%"}, []string{"h2"}},
		{store.TransactionFilter{Vendor: "_"}, []string{"h2"}},
		{store.TransactionFilter{From: "2026-09-02", To: "2026-09-30"}, []string{"h2"}},
		{store.TransactionFilter{Category: "income"}, []string{"h3"}},
		{store.TransactionFilter{ReviewStatus: store.ReviewNeeds}, []string{"h2"}},
		{store.TransactionFilter{Limit: 2}, []string{"F1", "h2"}},
	}
	for _, c := range cases {
		c.f.TenantID, c.f.UserID = "t1", "u1"
		var got []string
		for _, tx := range must(st.ListTransactions(ctx, c.f))(t) {
			got = append(got, tx.DedupeKey)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("filter %+v (-want +got):\n%s", c.f, diff)
		}
	}
	if n := len(must(st.ListTransactions(ctx, store.TransactionFilter{TenantID: "t1", UserID: "u2"}))(t)); n != 0 {
		t.Fatalf("another user sees %d transactions", n)
	}
}

func testDocuments(t *testing.T, st *store.Store) {
	d := store.Document{TenantID: "t1", ID: "doc1", UserID: "u1", SHA256: "abc", Filename: "september.csv", MediaType: "text/csv",
		SourceMessageID: "msg1", Size: 3, Content: []byte("a,b"), CreatedAt: t0}
	got, created := must2(st.PutDocument(ctx, d))(t)
	if !created || got.Status != store.DocumentQueued {
		t.Fatalf("first put: created=%v status=%q", created, got.Status)
	}
	dup := d
	dup.ID, dup.Filename = "doc2", "copy.csv"
	got, created = must2(st.PutDocument(ctx, dup))(t)
	if created || got.ID != "doc1" || string(got.Content) != "a,b" {
		t.Fatalf("same sha256 again: created=%v id=%q; want the first document", created, got.ID)
	}
	// Another user may hold the same file.
	mine := d
	mine.ID, mine.UserID = "doc3", "u2"
	if _, created = must2(st.PutDocument(ctx, mine))(t); !created {
		t.Fatal("another user's copy was not stored")
	}
	check(t, st.UpdateDocumentStatus(ctx, "t1", "doc1", store.DocumentImported, "12 transactions", 12, t0.Add(time.Minute)))
	wantErr(t, st.UpdateDocumentStatus(ctx, "t2", "doc1", store.DocumentFailed, "", 0, t0), store.ErrNotFound)
	got = must(st.GetDocument(ctx, "t1", "doc1"))(t)
	if got.Status != store.DocumentImported || got.Imported != 12 || !got.UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("after import: %+v", got)
	}
	_, err := st.GetDocument(ctx, "t2", "doc1")
	wantErr(t, err, store.ErrNotFound)
	queued := must(st.QueuedDocuments(ctx, t0.Add(time.Hour), 10))(t)
	if len(queued) != 1 || queued[0].ID != "doc3" || queued[0].TenantID != "t1" || queued[0].Content != nil {
		t.Fatalf("queued = %+v, want only doc3 (doc1 is imported) without content", queued)
	}
	if n := len(must(st.QueuedDocuments(ctx, t0, 10))(t)); n != 0 {
		t.Fatalf("%d queued before their creation", n)
	}
	recent := must(st.RecentDocuments(ctx, "t1", "u1", 10))(t)
	if len(recent) != 1 || recent[0].ID != "doc1" || recent[0].Content != nil {
		t.Fatalf("recent = %+v, want doc1 without content", recent)
	}
}

func must2[A any, B any](a A, b B, err error) func(*testing.T) (A, B) {
	return func(t *testing.T) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}

func testNotifications(t *testing.T, st *store.Store) {
	n := store.Notification{TenantID: "t1", UserID: "u1", ID: "n1", Kind: "import_completed", Title: "Imported 12 transactions",
		Body: "from september.csv", Data: json.RawMessage(`{"count":12}`), CreatedAt: t0}
	if created := must(st.AddNotification(ctx, n))(t); !created {
		t.Fatal("not created")
	}
	if created := must(st.AddNotification(ctx, n))(t); created {
		t.Fatal("the same notification was stored twice")
	}
	n2 := n
	n2.ID, n2.CreatedAt = "n2", t0.Add(time.Minute)
	must(st.AddNotification(ctx, n2))(t)
	list := must(st.ListNotifications(ctx, "t1", "u1", false, 10))(t)
	if len(list) != 2 || list[0].ID != "n2" || string(list[1].Data) != `{"count":12}` {
		t.Fatalf("inbox = %+v, want n2 then n1", list)
	}
	wantErr(t, st.MarkNotificationRead(ctx, "t1", "u2", "n1", t0), store.ErrNotFound)
	wantErr(t, st.MarkNotificationRead(ctx, "t2", "u1", "n1", t0), store.ErrNotFound)
	check(t, st.MarkNotificationRead(ctx, "t1", "u1", "n1", t0.Add(time.Hour)))
	check(t, st.MarkNotificationRead(ctx, "t1", "u1", "n1", t0.Add(2*time.Hour)))
	unread := must(st.ListNotifications(ctx, "t1", "u1", true, 10))(t)
	if len(unread) != 1 || unread[0].ID != "n2" {
		t.Fatalf("unread = %+v, want n2", unread)
	}
	all := must(st.ListNotifications(ctx, "t1", "u1", false, 10))(t)
	if all[1].ReadAt == nil || !all[1].ReadAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("read_at = %v, want the first read time", all[1].ReadAt)
	}
}

func testFrames(t *testing.T, st *store.Store) {
	for i, ev := range []string{"e1", "e2", "e3"} {
		seq, created := must2(st.AppendFrame(ctx, "t1", "u1", ev, []byte(ev), t0))(t)
		if seq != int64(i+1) || !created {
			t.Fatalf("%s: seq %d created %v", ev, seq, created)
		}
	}
	seq, created := must2(st.AppendFrame(ctx, "t1", "u1", "e2", []byte("again"), t0))(t)
	if seq != 2 || created {
		t.Fatalf("redelivered e2: seq %d created %v, want its first seq 2", seq, created)
	}
	if seq, _ := must2(st.AppendFrame(ctx, "t1", "u2", "e1", []byte("x"), t0))(t); seq != 1 {
		t.Fatalf("another user's first seq = %d", seq)
	}
	// The redelivery did not burn a seq.
	if seq, _ := must2(st.AppendFrame(ctx, "t1", "u1", "e4", []byte("e4"), t0))(t); seq != 4 {
		t.Fatalf("next seq = %d, want 4", seq)
	}
	after := must(st.FramesAfter(ctx, "t1", "u1", 1, 10))(t)
	var got []string
	for _, f := range after {
		got = append(got, fmt.Sprintf("%d:%s", f.Seq, f.Payload))
	}
	if diff := cmp.Diff([]string{"2:e2", "3:e3", "4:e4"}, got); diff != "" {
		t.Fatalf("frames after 1 (-want +got):\n%s", diff)
	}
	if n := len(must(st.FramesAfter(ctx, "t1", "u1", 4, 10))(t)); n != 0 {
		t.Fatalf("%d frames after the last", n)
	}
	// A turn's frames are found in order, and never another user's or
	// another turn's.
	must2(st.AppendFrame(ctx, "t1", "u1", "e5", []byte(`{"type":"ack","turn_id":"tA"}`), t0))(t)
	must2(st.AppendFrame(ctx, "t1", "u1", "e6", []byte(`{"type":"answer","turn_id":"tB"}`), t0))(t)
	must2(st.AppendFrame(ctx, "t1", "u1", "e7", []byte(`{"type":"answer","turn_id":"tA"}`), t0))(t)
	must2(st.AppendFrame(ctx, "t1", "u2", "e8", []byte(`{"type":"answer","turn_id":"tA"}`), t0))(t)
	var seqs []int64
	for _, f := range must(st.FramesOfTurn(ctx, "t1", "u1", "tA", 100))(t) {
		seqs = append(seqs, f.Seq)
	}
	if diff := cmp.Diff([]int64{5, 7}, seqs); diff != "" {
		t.Fatalf("frames of turn tA (-want +got):\n%s", diff)
	}
	if f := must(st.FramesOfTurn(ctx, "t1", "u1", "tA", 1))(t); len(f) != 1 || f[0].Seq != 7 {
		t.Fatalf("the latest frame of tA = %+v, want seq 7 alone", f)
	}
}

func testFramesRace(t *testing.T, st *store.Store) {
	var wg sync.WaitGroup
	seqs := make([]int64, 6)
	for i := range seqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := "same"
			if i%2 == 1 {
				ev = fmt.Sprintf("other-%d", i)
			}
			seq, _, err := st.AppendFrame(ctx, "t1", "u1", ev, []byte(ev), t0)
			if err != nil {
				t.Errorf("append: %v", err)
			}
			seqs[i] = seq
		}()
	}
	wg.Wait()
	if seqs[0] != seqs[2] || seqs[0] != seqs[4] {
		t.Fatalf("one event got several seqs: %v", seqs)
	}
	frames := must(st.FramesAfter(ctx, "t1", "u1", 0, 100))(t)
	if len(frames) != 4 || frames[3].Seq != 4 {
		t.Fatalf("%d frames, last seq %d; want 4 frames numbered 1..4", len(frames), frames[len(frames)-1].Seq)
	}
}

func testAuditToolCalls(t *testing.T, st *store.Store) {
	e := store.AuditEntry{TenantID: "t1", ID: "call1", UserID: "u1", Tool: "add_expense", CallID: "call1", Outcome: "ok",
		Args: json.RawMessage(`{"item":"x"}`), DurationMS: 12, CreatedAt: t0}
	check(t, st.AppendAudit(ctx, e))
	check(t, st.AppendAudit(ctx, e))
	list := must(st.ListAudit(ctx, "t1", 10))(t)
	if len(list) != 1 {
		t.Fatalf("audit holds %d entries for one call", len(list))
	}
	if diff := cmp.Diff(e, list[0]); diff != "" {
		t.Fatalf("audit (-want +got):\n%s", diff)
	}
	if n := len(must(st.ListAudit(ctx, "t2", 10))(t)); n != 0 {
		t.Fatal("another tenant sees the audit log")
	}

	_, err := st.GetToolCall(ctx, "t1", "call2")
	wantErr(t, err, store.ErrNotFound)
	// A result goes in with its call's audit entry; a second put of the
	// call keeps both as they were.
	first := store.ToolCall{TenantID: "t1", CallID: "call2", Tool: "add_expense", Result: json.RawMessage(`{"ok":true}`), CreatedAt: t0}
	entry := store.AuditEntry{TenantID: "t1", ID: "call2", UserID: "u1", Tool: "add_expense", CallID: "call2", Outcome: "ok",
		Args: json.RawMessage(`{"item":"y"}`), DurationMS: 3, CreatedAt: t0.Add(time.Second)}
	got, created := must2(st.PutToolCall(ctx, first, entry))(t)
	if !created || string(got.Result) != `{"ok":true}` {
		t.Fatalf("first put: %+v %v", got, created)
	}
	second, again := first, entry
	second.Result = json.RawMessage(`{"ok":false}`)
	again.Outcome = "not_found"
	got, created = must2(st.PutToolCall(ctx, second, again))(t)
	if created || string(got.Result) != `{"ok":true}` {
		t.Fatalf("second put returned %s created=%v; want the first result kept", got.Result, created)
	}
	list = must(st.ListAudit(ctx, "t1", 10))(t)
	if len(list) != 2 || cmp.Diff(entry, list[0]) != "" {
		t.Fatalf("audit after two puts of call2: %+v; want its first entry once, beside call1's", list)
	}
	_, err = st.GetToolCall(ctx, "t2", "call2")
	wantErr(t, err, store.ErrNotFound)

	// Inside a transaction that rolls back, neither stays.
	boom := errors.New("boom")
	err = st.InTx(ctx, func(tx *store.Store) error {
		third := store.ToolCall{TenantID: "t1", CallID: "call3", Tool: "add_expense", Result: json.RawMessage(`{}`)}
		if _, _, err := tx.PutToolCall(ctx, third, store.AuditEntry{TenantID: "t1", ID: "call3", UserID: "u1", Tool: "add_expense", CallID: "call3", Outcome: "ok"}); err != nil {
			return err
		}
		return boom
	})
	wantErr(t, err, boom)
	_, err = st.GetToolCall(ctx, "t1", "call3")
	wantErr(t, err, store.ErrNotFound)
	if n := len(must(st.ListAudit(ctx, "t1", 10))(t)); n != 2 {
		t.Fatalf("audit holds %d entries after a rolled-back put, want 2", n)
	}

	// An entry appended without a result (a call refused before it ran,
	// say) takes the result put later under its id, and keeps its own
	// outcome.
	refused := store.AuditEntry{TenantID: "t1", ID: "call4", UserID: "u1", Tool: "add_expense", CallID: "call4", Outcome: "refused", CreatedAt: t0}
	check(t, st.AppendAudit(ctx, refused))
	fourth := store.ToolCall{TenantID: "t1", CallID: "call4", Tool: "add_expense", Result: json.RawMessage(`{"refused":true}`), CreatedAt: t0}
	if got, created := must2(st.PutToolCall(ctx, fourth, refused))(t); !created || string(got.Result) != `{"refused":true}` {
		t.Fatalf("a result put under an entry stored without one: %+v created=%v", got, created)
	}
	if got := must(st.GetToolCall(ctx, "t1", "call4"))(t); string(got.Result) != `{"refused":true}` || got.Tool != "add_expense" {
		t.Fatalf("call4's stored result = %+v", got)
	}
	list = must(st.ListAudit(ctx, "t1", 10))(t)
	var call4 []store.AuditEntry
	for _, e := range list {
		if e.ID == "call4" {
			call4 = append(call4, e)
		}
	}
	if len(list) != 3 || len(call4) != 1 || cmp.Diff(refused, call4[0]) != "" {
		t.Fatalf("audit after call4's result: %+v; want its one entry, as appended", list)
	}
}

func testUserAudit(t *testing.T, st *store.Store) {
	entries := []store.AuditEntry{
		{TenantID: "t1", ID: "a1", UserID: "olga", Tool: "add_expense", CallID: "a1", Outcome: "ok", Args: json.RawMessage(`{"item":"rent"}`), CreatedAt: t0},
		{TenantID: "t1", ID: "a2", UserID: "bob", Tool: "add_expense", CallID: "a2", Outcome: "ok", Args: json.RawMessage(`{"item":"sushi"}`), CreatedAt: t0.Add(time.Second)},
		{TenantID: "t1", ID: "a3", UserID: "olga", Tool: "search_gmail", CallID: "a3", Outcome: "ok", Args: json.RawMessage(`{"query":"bank"}`), CreatedAt: t0.Add(2 * time.Second)},
		{TenantID: "t2", ID: "a4", UserID: "olga", Tool: "add_expense", CallID: "a4", Outcome: "ok", Args: json.RawMessage(`{"item":"elsewhere"}`), CreatedAt: t0.Add(3 * time.Second)},
	}
	for _, e := range entries {
		check(t, st.AppendAudit(ctx, e))
	}
	ids := func(list []store.AuditEntry) []string {
		out := []string{}
		for _, e := range list {
			out = append(out, e.ID)
		}
		return out
	}
	tests := []struct {
		tenant, user string
		limit        int
		want         []string
	}{
		{"t1", "olga", 10, []string{"a3", "a1"}},
		{"t1", "olga", 1, []string{"a3"}},
		{"t1", "bob", 10, []string{"a2"}},
		{"t1", "eve", 10, []string{}},
		{"t2", "olga", 10, []string{"a4"}},
		{"t2", "bob", 10, []string{}},
	}
	for _, tt := range tests {
		got := ids(must(st.ListUserAudit(ctx, tt.tenant, tt.user, tt.limit))(t))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ListUserAudit(%s, %s, %d) (-want +got):\n%s", tt.tenant, tt.user, tt.limit, diff)
		}
	}
	own := must(st.ListUserAudit(ctx, "t1", "bob", 10))(t)
	if len(own) != 1 || cmp.Diff(entries[1], own[0]) != "" {
		t.Errorf("bob's own entry = %+v, want it whole with its arguments: %+v", own, entries[1])
	}
}

func testInTx(t *testing.T, st *store.Store) {
	boom := errors.New("boom")
	err := st.InTx(ctx, func(tx *store.Store) error {
		if _, err := tx.AddExpense(ctx, expense("t1", "u1", "x", 1, "2026-11-01")); err != nil {
			return err
		}
		check(t, tx.CreateProposal(ctx, proposal("t1", "p1")))
		return boom
	})
	wantErr(t, err, boom)
	if n := len(must(st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "t1", UserID: "u1"}))(t)); n != 0 {
		t.Fatalf("rolled-back expense is visible (%d rows)", n)
	}
	_, err = st.GetProposal(ctx, "t1", "p1")
	wantErr(t, err, store.ErrNotFound)
	// The rolled-back id is free again: numbering has no gap.
	if e := must(st.AddExpense(ctx, expense("t1", "u1", "y", 1, "2026-11-01")))(t); e.ID != 1 {
		t.Fatalf("id after rollback = %d, want 1", e.ID)
	}
}

func testMailTokens(t *testing.T, st *store.Store) {
	_, err := st.GetMailToken(ctx, "t1", "u1")
	wantErr(t, err, store.ErrNotFound)
	check(t, st.PutMailToken(ctx, "t1", "u1", []byte{1, 2, 3}, t0))
	check(t, st.PutMailToken(ctx, "t1", "u1", []byte{4, 5}, t0.Add(time.Hour)))
	if got := must(st.GetMailToken(ctx, "t1", "u1"))(t); string(got) != string([]byte{4, 5}) {
		t.Fatalf("token = %v, want the latest", got)
	}
	_, err = st.GetMailToken(ctx, "t2", "u1")
	wantErr(t, err, store.ErrNotFound)
}

// A value the engine itself refuses (Postgres will not hold a NUL in
// text) is an invalid-content error that the bus does not retry, so one
// such message cannot hold a lane for a minute of retries. SQLite holds it.
func testContentErrors(t *testing.T, st *store.Store) {
	_, err := st.AddExpense(ctx, expense("tc", "u1", "ab\x00cd", 400, "2026-11-01"))
	if st.Dialect() != "postgres" {
		check(t, err)
		return
	}
	if !errors.Is(err, store.ErrInvalidContent) || !bus.IsPermanent(err) {
		t.Fatalf("NUL in text = %v (invalid content %v, permanent %v)", err, errors.Is(err, store.ErrInvalidContent), bus.IsPermanent(err))
	}
	// An ordinary conflict is not permanent.
	check(t, st.CreateProposal(ctx, proposal("tc", "p1")))
	err = st.CreateProposal(ctx, proposal("tc", "p1"))
	if err != nil && bus.IsPermanent(err) {
		t.Fatalf("a repeated proposal id is marked permanent: %v", err)
	}
}

func testConversationHistory(t *testing.T, st *store.Store) {
	for i := range 5 {
		must2(st.AppendConversationFrame(ctx, "t1", "u1", "c1", fmt.Sprintf("a%d", i), []byte(fmt.Sprintf("a%d", i)), t0))(t)
		must2(st.AppendConversationFrame(ctx, "t1", "u1", "c2", fmt.Sprintf("b%d", i), []byte(fmt.Sprintf("b%d", i)), t0))(t)
	}
	must2(st.AppendConversationFrame(ctx, "t1", "u2", "c1", "x", []byte("other user's"), t0))(t)
	page := func(before int64, limit int) []string {
		var out []string
		for _, f := range must(st.ConversationFrames(ctx, "t1", "u1", "c1", before, limit))(t) {
			out = append(out, fmt.Sprintf("%d:%s", f.Seq, f.Payload))
		}
		return out
	}
	if diff := cmp.Diff([]string{"7:a3", "9:a4"}, page(0, 2)); diff != "" {
		t.Fatalf("newest page (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1:a0", "3:a1", "5:a2"}, page(7, 10)); diff != "" {
		t.Fatalf("page before 7 (-want +got):\n%s", diff)
	}
	check(t, st.TouchConversation(ctx, "t1", "u1", "c1", "first words", t0))
	check(t, st.TouchConversation(ctx, "t1", "u1", "c2", "other words", t0.Add(time.Minute)))
	check(t, st.TouchConversation(ctx, "t1", "u1", "c1", "never the title", t0.Add(2*time.Minute)))
	check(t, st.TouchConversation(ctx, "t1", "u2", "c9", "not u1's", t0))
	var got []string
	for _, c := range must(st.ListConversations(ctx, "t1", "u1", 10))(t) {
		got = append(got, c.ConversationID+":"+c.Title)
	}
	if diff := cmp.Diff([]string{"c1:first words", "c2:other words"}, got); diff != "" {
		t.Fatalf("conversations, latest used first (-want +got):\n%s", diff)
	}
	// The order of use is kept: c2 used after c1, within the minute,
	// comes first, and c1 used again comes back first.
	check(t, st.TouchConversation(ctx, "t1", "u1", "c2", "", t0.Add(2*time.Minute+10*time.Second)))
	order := func() string {
		t.Helper()
		var ids []string
		for _, c := range must(st.ListConversations(ctx, "t1", "u1", 10))(t) {
			ids = append(ids, c.ConversationID)
		}
		return strings.Join(ids, ",")
	}
	if got := order(); got != "c2,c1" {
		t.Errorf("after c2 was used: conversations %s, want c2,c1", got)
	}
	check(t, st.TouchConversation(ctx, "t1", "u1", "c1", "", t0.Add(2*time.Minute+20*time.Second)))
	if got := order(); got != "c1,c2" {
		t.Errorf("after c1 was used again: conversations %s, want c1,c2", got)
	}
	// The conversation in use keeps its last-used time to the minute: a
	// message within a minute of it leaves it, one a minute or more
	// after moves it.
	lastUsed := func() time.Time {
		t.Helper()
		for _, c := range must(st.ListConversations(ctx, "t1", "u1", 10))(t) {
			if c.ConversationID == "c1" {
				return c.UpdatedAt
			}
		}
		t.Fatal("c1 not listed")
		return time.Time{}
	}
	kept := t0.Add(2*time.Minute + 20*time.Second)
	check(t, st.TouchConversation(ctx, "t1", "u1", "c1", "", kept.Add(59*time.Second)))
	if got := lastUsed(); !got.Equal(kept) {
		t.Errorf("c1 used 59 s after its kept time: last used %v, want it kept at %v", got, kept)
	}
	check(t, st.TouchConversation(ctx, "t1", "u1", "c1", "", kept.Add(time.Minute)))
	if got := lastUsed(); !got.Equal(kept.Add(time.Minute)) {
		t.Errorf("c1 used a minute after its kept time: last used %v, want %v", got, kept.Add(time.Minute))
	}
}

// A user's message is a frame of its conversation and titles it, in one
// commit; the same message again keeps its first seq and spends none.
func testUserMessage(t *testing.T, st *store.Store) {
	seq, created := must2(st.AppendUserMessage(ctx, "t1", "u1", "c7", "um-1", "lunch money", []byte("m1"), t0))(t)
	if seq != 1 || !created {
		t.Fatalf("first message: seq %d created %v, want 1 true", seq, created)
	}
	again, created := must2(st.AppendUserMessage(ctx, "t1", "u1", "c7", "um-1", "lunch money", []byte("m1"), t0))(t)
	if again != 1 || created {
		t.Fatalf("the same message again: seq %d created %v, want 1 false", again, created)
	}
	next, _ := must2(st.AppendUserMessage(ctx, "t1", "u1", "c7", "um-2", "not the title", []byte("m2"), t0.Add(time.Minute)))(t)
	if next != 2 {
		t.Fatalf("second message: seq %d, want 2 (a repeat spent no seq)", next)
	}
	// A late repeat of the first message changes nothing: not the seq,
	// not when the conversation was last used.
	if again, created := must2(st.AppendUserMessage(ctx, "t1", "u1", "c7", "um-1", "lunch money", []byte("m1"), t0.Add(2*time.Minute)))(t); again != 1 || created {
		t.Fatalf("a late repeat: seq %d created %v, want 1 false", again, created)
	}
	list := must(st.ListConversations(ctx, "t1", "u1", 10))(t)
	if len(list) != 1 || list[0].Title != "lunch money" || !list[0].UpdatedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("conversations = %+v, want c7 titled by its first message, used at the second", list)
	}
	frames := must(st.ConversationFrames(ctx, "t1", "u1", "c7", 0, 10))(t)
	if len(frames) != 2 || string(frames[0].Payload) != "m1" || string(frames[1].Payload) != "m2" {
		t.Fatalf("frames = %+v, want m1 and m2", frames)
	}
}

func ledgerTx(tenant, user, key, date string, minor int64, currency, desc, category string) store.Transaction {
	return store.Transaction{TenantID: tenant, UserID: user, DocumentID: "doc-" + tenant, Date: date, AmountMinor: minor, Currency: currency,
		Description: desc, Vendor: desc, Category: category, DedupeKey: key, ReviewStatus: store.ReviewOK, CreatedAt: t0}
}

func ledgerExpense(tenant, user, item string, minor int64, currency, date, category string) store.Expense {
	e := expense(tenant, user, item, minor, date)
	e.Currency, e.Category = currency, category
	return e
}

// The ledger adds up expenses and imported transactions together, per
// currency: money out is spending, money in is income, genuine repeats
// both count, the range's ends are inside it, and nobody else's entries
// count.
func testLedgerSummary(t *testing.T, st *store.Store) {
	for _, e := range []store.Expense{
		ledgerExpense("t1", "u1", "coffee", 350, "GBP", "2026-11-01", "food"),
		ledgerExpense("t1", "u1", "rent", 100000, "GBP", "2026-11-30", "bills"),
		ledgerExpense("t1", "u1", "lunch", 1200, "EUR", "2026-11-15", "food"),
		ledgerExpense("t1", "u1", "before", 999, "GBP", "2026-10-31", "food"),
		ledgerExpense("t1", "u1", "after", 888, "GBP", "2026-12-01", "food"),
		ledgerExpense("t1", "u2", "someone else's", 7777, "GBP", "2026-11-10", "food"),
		ledgerExpense("t2", "u1", "another tenant's", 5555, "GBP", "2026-11-10", "food"),
	} {
		must(st.AddExpense(ctx, e))(t)
	}
	txs := []store.Transaction{
		// Two identical lines of one statement: a genuine repeat, two rows.
		ledgerTx("t1", "u1", "k1", "2026-11-10", -1299, "GBP", "TESCO STORES", "groceries"),
		ledgerTx("t1", "u1", "k2", "2026-11-10", -1299, "GBP", "TESCO STORES", "groceries"),
		ledgerTx("t1", "u1", "k3", "2026-11-25", 250000, "GBP", "SALARY", "income"),
		ledgerTx("t1", "u1", "k4", "2026-11-12", -5000, "USD", "UNITY", "software"),
		ledgerTx("t1", "u1", "k5", "2026-11-16", 300, "EUR", "REFUND", "food"),
		ledgerTx("t1", "u1", "k6", "2026-12-01", -4000, "GBP", "LATER", "food"),
		ledgerTx("t1", "u2", "k1", "2026-11-10", -6666, "GBP", "OTHER USER", "food"),
		ledgerTx("t2", "u1", "k1", "2026-11-10", -4444, "GBP", "OTHER TENANT", "food"),
	}
	if n := must(st.InsertTransactions(ctx, txs))(t); n != len(txs) {
		t.Fatalf("inserted %d transactions, want %d", n, len(txs))
	}
	gbp := func(minor int64) store.LedgerAmount { return store.LedgerAmount{Currency: "GBP", Minor: minor} }
	tests := []struct {
		name, from, to string
		want           store.LedgerSummary
	}{
		{"november", "2026-11-01", "2026-11-30", store.LedgerSummary{
			Count:    8,
			Spending: []store.LedgerAmount{{Currency: "EUR", Minor: 1200}, gbp(350 + 100000 + 2*1299), {Currency: "USD", Minor: 5000}},
			Income:   []store.LedgerAmount{{Currency: "EUR", Minor: 300}, gbp(250000)},
			ByCategory: []store.CategorySpending{
				{Category: "bills", Spending: []store.LedgerAmount{gbp(100000)}},
				{Category: "food", Spending: []store.LedgerAmount{{Currency: "EUR", Minor: 1200}, gbp(350)}},
				{Category: "groceries", Spending: []store.LedgerAmount{gbp(2 * 1299)}},
				{Category: "software", Spending: []store.LedgerAmount{{Currency: "USD", Minor: 5000}}},
			},
		}},
		{"last day only", "2026-11-30", "2026-11-30", store.LedgerSummary{
			Count: 1, Spending: []store.LedgerAmount{gbp(100000)}, Income: []store.LedgerAmount{},
			ByCategory: []store.CategorySpending{{Category: "bills", Spending: []store.LedgerAmount{gbp(100000)}}},
		}},
		{"first day only", "2026-12-01", "2026-12-01", store.LedgerSummary{
			Count: 2, Spending: []store.LedgerAmount{gbp(4888)}, Income: []store.LedgerAmount{},
			ByCategory: []store.CategorySpending{{Category: "food", Spending: []store.LedgerAmount{gbp(4888)}}},
		}},
		{"nothing", "2025-01-01", "2025-12-31", store.LedgerSummary{
			Spending: []store.LedgerAmount{}, Income: []store.LedgerAmount{}, ByCategory: []store.CategorySpending{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.want.From, tt.want.To = tt.from, tt.to
			got := must(st.LedgerSummary(ctx, "t1", "u1", tt.from, tt.to))(t)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("summary %s..%s (-want +got):\n%s", tt.from, tt.to, diff)
			}
		})
	}
	other := must(st.LedgerSummary(ctx, "t1", "u2", "2026-11-01", "2026-11-30"))(t)
	if diff := cmp.Diff([]store.LedgerAmount{gbp(7777 + 6666)}, other.Spending); diff != "" || other.Count != 2 {
		t.Errorf("another user's summary counts %d entries, spending (-want +got):\n%s", other.Count, diff)
	}
	if _, err := st.LedgerSummary(ctx, "t1", "", "2026-11-01", "2026-11-30"); err == nil {
		t.Error("a summary without a user was given")
	}
}

// Paging the ledger by cursor, newest first, returns every entry once;
// entries are signed (an expense is money out) and filters and users are
// kept apart.
func testLedgerPaging(t *testing.T, st *store.Store) {
	var txs []store.Transaction
	for i := range 9 {
		date := fmt.Sprintf("2026-11-%02d", 1+i%3) // several entries share a date
		must(st.AddExpense(ctx, ledgerExpense("t1", "u1", fmt.Sprintf("item %d", i), int64(100+i), "GBP", date, "food")))(t)
		txs = append(txs, ledgerTx("t1", "u1", fmt.Sprintf("k%d", i), date, int64(-200-i), "GBP", fmt.Sprintf("SHOP %d", i), "shopping"))
	}
	txs = append(txs, ledgerTx("t1", "u2", "k0", "2026-11-02", -1, "GBP", "OTHER USER", "food"))
	must(st.InsertTransactions(ctx, txs))(t)
	must(st.AddExpense(ctx, ledgerExpense("t2", "u1", "other tenant", 1, "GBP", "2026-11-02", "food")))(t)

	all := must(st.ListLedger(ctx, store.LedgerFilter{TenantID: "t1", UserID: "u1"}))(t)
	if len(all.Entries) != 18 || all.Next != "" {
		t.Fatalf("listed %d entries (next %q), want 18 and no next page", len(all.Entries), all.Next)
	}
	for i, e := range all.Entries {
		if i > 0 && e.Date > all.Entries[i-1].Date {
			t.Fatalf("entry %d (%s) is newer than the one before (%s): want newest first", i, e.Date, all.Entries[i-1].Date)
		}
		if e.UserID != "u1" || e.TenantID != "t1" {
			t.Fatalf("entry %+v is not u1's of t1", e)
		}
		if e.Kind == store.LedgerExpense && e.AmountMinor >= 0 {
			t.Fatalf("expense %+v reads as money in; want a negative amount", e)
		}
	}
	key := func(e store.LedgerEntry) string { return fmt.Sprintf("%s/%d", e.Kind, e.ID) }
	for _, limit := range []int{1, 4, 17, 18, 50} {
		var got []string
		f := store.LedgerFilter{TenantID: "t1", UserID: "u1", Limit: limit}
		for pages := 0; ; pages++ {
			if pages > len(all.Entries) {
				t.Fatalf("limit %d: more pages than entries", limit)
			}
			page := must(st.ListLedger(ctx, f))(t)
			if len(page.Entries) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page.Entries))
			}
			for _, e := range page.Entries {
				got = append(got, key(e))
			}
			if page.Next == "" {
				break
			}
			f.Cursor = page.Next
		}
		var want []string
		for _, e := range all.Entries {
			want = append(want, key(e))
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("pages of %d (-want +got):\n%s", limit, diff)
		}
	}
	tests := []struct {
		name string
		give store.LedgerFilter
		want int
	}{
		{"range", store.LedgerFilter{From: "2026-11-02", To: "2026-11-02"}, 6},
		{"query matches description or merchant", store.LedgerFilter{Query: "shop 1"}, 1},
		{"query is not a pattern", store.LedgerFilter{Query: "%"}, 0},
		{"category", store.LedgerFilter{Category: "food"}, 9},
		{"another user", store.LedgerFilter{UserID: "u2"}, 1},
		{"another tenant", store.LedgerFilter{TenantID: "t2"}, 1},
		{"a user of another tenant", store.LedgerFilter{TenantID: "t2", UserID: "u2"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.give
			if f.TenantID == "" {
				f.TenantID = "t1"
			}
			if f.UserID == "" {
				f.UserID = "u1"
			}
			got := must(st.ListLedger(ctx, f))(t)
			if len(got.Entries) != tt.want {
				t.Errorf("%+v listed %d entries, want %d: %+v", f, len(got.Entries), tt.want, got.Entries)
			}
		})
	}
	_, err := st.ListLedger(ctx, store.LedgerFilter{TenantID: "t1", UserID: "u1", Cursor: "not-a-cursor"})
	wantErr(t, err, store.ErrInvalidCursor)
}
