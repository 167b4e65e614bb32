package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

var pruneT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func putCall(t *testing.T, st *store.Store, tenant, id string, at time.Time) {
	t.Helper()
	if _, _, err := st.PutToolCall(context.Background(), store.ToolCall{TenantID: tenant, CallID: id, Tool: "add_expense", Result: []byte(`{"ok":true}`), CreatedAt: at},
		store.AuditEntry{TenantID: tenant, ID: "a-" + id, UserID: "ann", Tool: "add_expense", CallID: id, Outcome: "ok", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
}

// Stored tool results older than the cutoff go, more than one batch of
// them; a younger one still answers its redelivered request.
func TestPruneToolCallsKeepsWhatRedeliveryNeeds(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for i := range 1203 {
			putCall(t, st, fmt.Sprintf("t%d", i%3), fmt.Sprintf("old%d", i), pruneT0)
		}
		putCall(t, st, "t0", "young", pruneT0.Add(2*time.Hour))
		n, err := st.PruneToolCalls(ctx, pruneT0.Add(time.Hour))
		if err != nil || n != 1203 {
			t.Fatalf("pruned %d tool calls (%v), want the 1,203 older than the cutoff", n, err)
		}
		if _, err := st.GetToolCall(ctx, "t1", "old7"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("an old call is still stored: %v", err)
		}
		if c, err := st.GetToolCall(ctx, "t0", "young"); err != nil || string(c.Result) != `{"ok":true}` {
			t.Errorf("the young call's result = %s, %v; want it kept for a redelivery", c.Result, err)
		}
		if n, err := st.PruneToolCalls(ctx, pruneT0.Add(time.Hour)); err != nil || n != 0 {
			t.Errorf("a second pass pruned %d (%v), want 0", n, err)
		}
		// The audit entries are not engine state: they stay.
		if got, err := st.ListAudit(ctx, "t1", 1000); err != nil || len(got) != 401 {
			t.Errorf("audit entries of t1 after pruning tool calls = %d (%v), want all 401", len(got), err)
		}
	})
}

// Proposals go once past their expiry by the cutoff, whatever their
// status; one still open or recently expired stays.
func TestPruneProposalsPastExpiryOnly(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		put := func(id, status string, expires time.Time) {
			t.Helper()
			p := proposalAt(id, status, expires)
			if err := st.CreateProposal(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		cutoff := pruneT0.Add(24 * time.Hour)
		put("executed-old", store.ProposalExecuted, pruneT0)
		put("expired-old", store.ProposalPending, pruneT0)
		put("superseded-old", store.ProposalSuperseded, pruneT0.Add(time.Hour))
		put("executed-young", store.ProposalExecuted, cutoff.Add(time.Minute))
		put("pending", store.ProposalPending, cutoff.Add(time.Hour))
		n, err := st.PruneProposals(ctx, cutoff)
		if err != nil || n != 3 {
			t.Fatalf("pruned %d proposals (%v), want the 3 expired before the cutoff", n, err)
		}
		for id, kept := range map[string]bool{"executed-old": false, "expired-old": false, "superseded-old": false, "executed-young": true, "pending": true} {
			_, err := st.GetProposal(ctx, "acme", id)
			if got := err == nil; got != kept {
				t.Errorf("%s kept = %v (%v), want %v", id, got, err, kept)
			}
		}
	})
}

func proposalAt(id, status string, expires time.Time) store.Proposal {
	return store.Proposal{TenantID: "acme", ID: id, UserID: "ann", ConversationID: "c1", TurnID: "turn-" + id, Tool: "add_expense",
		Args: []byte(`{"item":"tea"}`), Summary: "Add tea?", Status: status, Revision: 1, ExpiresAt: expires, CreatedAt: expires.Add(-time.Hour)}
}

// The message retention removes one tenant's old frames and no one
// else's, keeps each user's newest frame so that no seq is given twice,
// and takes removed messages out of search.
func TestPruneFramesPerTenantKeepsEachUsersNewest(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		frame := func(tenant, user, id string, at time.Time) int64 {
			t.Helper()
			seq, _, err := st.AppendUserMessage(ctx, tenant, user, "c1", id, "title",
				[]byte(`{"type":"user_message","conversation_id":"c1","user_message":{"text":"parking permit `+id+`"}}`), at)
			if err != nil {
				t.Fatal(err)
			}
			return seq
		}
		old, young := pruneT0, pruneT0.Add(100*24*time.Hour)
		for i := range 3 {
			frame("acme", "ann", fmt.Sprintf("ann%d", i), old)
		}
		frame("acme", "ann", "ann-new", young)
		frame("acme", "bob", "bob-only", old) // bob's newest: kept
		frame("globex", "gil", "gil-old", old)
		if _, err := st.IndexSearch(ctx, 100); err != nil {
			t.Fatal(err)
		}

		n, err := st.PruneFrames(ctx, "acme", pruneT0.Add(90*24*time.Hour))
		if err != nil || n != 3 {
			t.Fatalf("pruned %d frames (%v), want ann's 3 old ones", n, err)
		}
		seqs := func(tenant, user string) []int64 { return frameSeqs(t, st, tenant, user) }
		if got := seqs("acme", "ann"); !slices.Equal(got, []int64{4}) {
			t.Errorf("ann's frames = %v, want only the young one, seq 4", got)
		}
		if got := seqs("acme", "bob"); !slices.Equal(got, []int64{1}) {
			t.Errorf("bob's frames = %v, want his only (newest) frame kept", got)
		}
		if got := seqs("globex", "gil"); !slices.Equal(got, []int64{1}) {
			t.Errorf("another tenant's frames = %v, want them untouched", got)
		}
		// New frames continue the seqs; none is given twice.
		if seq := frame("acme", "bob", "bob-next", young); seq != 2 {
			t.Errorf("bob's next seq = %d, want 2", seq)
		}
		if seq := frame("acme", "ann", "ann-next", young); seq != 5 {
			t.Errorf("ann's next seq = %d, want 5", seq)
		}
		if _, err := st.IndexSearch(ctx, 100); err != nil {
			t.Fatal(err)
		}
		hits, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "acme", UserID: "ann", Query: "parking permit", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 2 {
			t.Errorf("search finds %d of ann's messages, want the 2 kept (pruned ones leave the index)", len(hits))
		}
	})
}

// A user with more old frames than one batch loses them all, down to the
// first young one; a young frame stored among old ones is kept, and so is
// an old one stored after it (another replica's clock), until a pass after
// the young one ages out: nothing goes before its time.
func TestPruneFramesWalksEachUsersFramesInOrder(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		frame := func(user, id string, at time.Time) int64 {
			t.Helper()
			seq, _, err := st.AppendFrame(ctx, "acme", user, id, []byte(`{"type":"answer"}`), at)
			if err != nil {
				t.Fatal(err)
			}
			return seq
		}
		old, cutoff := pruneT0, pruneT0.Add(90*24*time.Hour)
		for i := range 1205 {
			frame("ann", fmt.Sprintf("ann%d", i), old)
		}
		frame("ann", "ann-young", cutoff.Add(time.Hour))    // seq 1206
		frame("ann", "ann-late", cutoff.Add(-time.Second))  // seq 1207, old but after a young one
		frame("ann", "ann-newest", cutoff.Add(2*time.Hour)) // seq 1208
		frame("bob", "bob-young", cutoff.Add(time.Hour))
		frame("bob", "bob-old-after", old) // bob's newest: kept
		frame("cat", "cat-old", old)
		frame("cat", "cat-old2", old) // cat's newest: kept

		n, err := st.PruneFrames(ctx, "acme", cutoff)
		if err != nil || n != 1206 {
			t.Fatalf("pruned %d frames (%v), want ann's 1,205 old ones and cat's older one", n, err)
		}
		seqs := func(user string) []int64 { return frameSeqs(t, st, "acme", user) }
		if got := seqs("ann"); !slices.Equal(got, []int64{1206, 1207, 1208}) {
			t.Errorf("ann's frames = %v, want the young one and what came after it", got)
		}
		if got := seqs("bob"); !slices.Equal(got, []int64{1, 2}) {
			t.Errorf("bob's frames = %v, want both (his first is young, his newest always stays)", got)
		}
		if got := seqs("cat"); !slices.Equal(got, []int64{2}) {
			t.Errorf("cat's frames = %v, want only the newest", got)
		}
		// Once the young frames are old too, the late one goes with them.
		if n, err := st.PruneFrames(ctx, "acme", cutoff.Add(90*time.Minute)); err != nil || n != 3 {
			t.Errorf("the next pass pruned %d (%v), want ann's young and late frames and bob's first", n, err)
		}
		if got := seqs("ann"); !slices.Equal(got, []int64{1208}) {
			t.Errorf("ann's frames = %v, want only the newest", got)
		}
	})
}

// Documents, notifications and audit entries go per tenant past the
// cutoff; a document still waiting to be imported stays whatever its age.
func TestPruneDocumentsNotificationsAuditPerTenant(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		old, young, cutoff := pruneT0, pruneT0.Add(48*time.Hour), pruneT0.Add(24*time.Hour)
		for _, tenant := range []string{"acme", "globex"} {
			for _, d := range []struct {
				id, status string
				at         time.Time
			}{{"old", store.DocumentImported, old}, {"old-failed", store.DocumentFailed, old}, {"old-queued", store.DocumentQueued, old}, {"young", store.DocumentImported, young}} {
				if _, _, err := st.PutDocument(ctx, store.Document{TenantID: tenant, ID: d.id, UserID: "ann", SHA256: d.id, Filename: d.id + ".csv",
					Size: 4, Content: []byte("data"), Status: d.status, CreatedAt: d.at}); err != nil {
					t.Fatal(err)
				}
			}
			for _, n := range []struct {
				id string
				at time.Time
			}{{"n-old", old}, {"n-young", young}} {
				if _, err := st.AddNotification(ctx, store.Notification{TenantID: tenant, UserID: "ann", ID: n.id, Kind: "import", Title: "Imported", Body: "ok", CreatedAt: n.at}); err != nil {
					t.Fatal(err)
				}
			}
			for _, a := range []struct {
				id string
				at time.Time
			}{{"a-old", old}, {"a-young", young}} {
				if err := st.AppendAudit(ctx, store.AuditEntry{TenantID: tenant, ID: a.id, UserID: "ann", Tool: "add_expense", CallID: a.id, Outcome: "ok", CreatedAt: a.at}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if n, err := st.PruneDocuments(ctx, "acme", cutoff); err != nil || n != 2 {
			t.Fatalf("pruned %d documents (%v), want acme's old imported and old failed", n, err)
		}
		if n, err := st.PruneNotifications(ctx, "acme", cutoff); err != nil || n != 1 {
			t.Fatalf("pruned %d notifications (%v), want acme's old one", n, err)
		}
		if n, err := st.PruneAudit(ctx, "acme", cutoff); err != nil || n != 1 {
			t.Fatalf("pruned %d audit entries (%v), want acme's old one", n, err)
		}
		for _, tenant := range []string{"acme", "globex"} {
			wantDocs := []string{"old-queued", "young"}
			if tenant == "globex" {
				wantDocs = []string{"old", "old-failed", "old-queued", "young"}
			}
			var docs []string
			for _, id := range []string{"old", "old-failed", "old-queued", "young"} {
				if _, err := st.GetDocument(ctx, tenant, id); err == nil {
					docs = append(docs, id)
				} else if !errors.Is(err, store.ErrNotFound) {
					t.Fatal(err)
				}
			}
			if !slices.Equal(docs, wantDocs) {
				t.Errorf("%s documents = %v, want %v", tenant, docs, wantDocs)
			}
			notes, err := st.ListNotifications(ctx, tenant, "ann", false, 10)
			if err != nil {
				t.Fatal(err)
			}
			audit, err := st.ListAudit(ctx, tenant, 10)
			if err != nil {
				t.Fatal(err)
			}
			want := 2
			if tenant == "acme" {
				want = 1
			}
			if len(notes) != want || len(audit) != want {
				t.Errorf("%s keeps %d notifications and %d audit entries, want %d of each", tenant, len(notes), len(audit), want)
			}
		}
		for table, want := range map[string][]string{"documents": {"acme", "globex"}, "frames": nil, "audit_log": {"acme", "globex"}} {
			got, err := st.Tenants(ctx, table)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("tenants of %s = %v (%v), want %v", table, got, err, want)
			}
		}
	})
}

// Two replicas pruning one table at once delete every old row once
// between them, count each once, and leave the young ones.
func TestPruneTwoReplicasAtOnce(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			dsn := e.DSN(t)
			a, b := storetest.Open(t, dsn), storetest.Open(t, dsn)
			for i := range 3000 {
				putCall(t, a, "acme", fmt.Sprintf("old%d", i), pruneT0)
			}
			for i := range 5 {
				putCall(t, a, "acme", fmt.Sprintf("young%d", i), pruneT0.Add(2*time.Hour))
			}
			var wg sync.WaitGroup
			counts := make([]int64, 2)
			errs := make([]error, 2)
			for i, st := range []*store.Store{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					counts[i], errs[i] = st.PruneToolCalls(context.Background(), pruneT0.Add(time.Hour))
				}()
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			// A replica that skipped rows the other held may leave some
			// for its next pass; together, the next passes finish.
			rest, err := a.PruneToolCalls(context.Background(), pruneT0.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if total := counts[0] + counts[1] + rest; total != 3000 {
				t.Fatalf("replicas counted %d + %d (+ %d later) = %d deleted, want 3,000", counts[0], counts[1], rest, total)
			}
			for i := range 5 {
				if _, err := b.GetToolCall(context.Background(), "acme", fmt.Sprintf("young%d", i)); err != nil {
					t.Errorf("young%d: %v", i, err)
				}
			}
		})
	}
}

// frameSeqs are the seqs of the frames user of tenant still has, oldest
// first.
func frameSeqs(t *testing.T, st *store.Store, tenant, user string) []int64 {
	t.Helper()
	fs, err := st.FramesAfter(context.Background(), tenant, user, 0, 5000)
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, f := range fs {
		out = append(out, f.Seq)
	}
	return out
}

// A result kept in its audit entry (the toolrunner's entries take the
// call's id) goes once past the cutoff, and the entry stays in the log.
func TestPruneToolResultsKeptInTheirAuditEntries(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		put := func(tenant, id string, at time.Time) {
			t.Helper()
			if _, created, err := st.PutToolCall(ctx, store.ToolCall{TenantID: tenant, CallID: id, Tool: "add_expense", Result: []byte(`{"ok":true}`), CreatedAt: at},
				store.AuditEntry{TenantID: tenant, ID: id, UserID: "ann", Tool: "add_expense", CallID: id, Outcome: "ok", CreatedAt: at}); err != nil || !created {
				t.Fatalf("put %s: created %v, %v", id, created, err)
			}
		}
		for i := range 1203 {
			put(fmt.Sprintf("t%d", i%3), fmt.Sprintf("old%d", i), pruneT0)
		}
		put("t0", "young", pruneT0.Add(2*time.Hour))
		putCall(t, st, "t0", "table", pruneT0) // a result in tool_calls, as before
		n, err := st.PruneToolCalls(ctx, pruneT0.Add(time.Hour))
		if err != nil || n != 1204 {
			t.Fatalf("pruned %d results (%v), want the 1,203 in the audit log and the 1 in tool_calls", n, err)
		}
		for _, id := range []string{"old7", "table"} {
			if _, err := st.GetToolCall(ctx, "t1", id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s's result is still stored: %v", id, err)
			}
		}
		if c, err := st.GetToolCall(ctx, "t0", "young"); err != nil || string(c.Result) != `{"ok":true}` {
			t.Errorf("the young call's result = %s, %v; want it kept for a redelivery", c.Result, err)
		}
		if n, err := st.PruneToolCalls(ctx, pruneT0.Add(time.Hour)); err != nil || n != 0 {
			t.Errorf("a second pass pruned %d (%v), want 0", n, err)
		}
		if got, err := st.ListAudit(ctx, "t1", 1000); err != nil || len(got) != 401 {
			t.Errorf("audit entries of t1 after pruning results = %d (%v), want all 401", len(got), err)
		}
		// A call pruned and delivered again runs again and stores anew.
		if _, created, err := st.PutToolCall(ctx, store.ToolCall{TenantID: "t1", CallID: "old7", Tool: "add_expense", Result: []byte(`{"again":true}`)},
			store.AuditEntry{TenantID: "t1", ID: "old7", UserID: "ann", Tool: "add_expense", CallID: "old7", Outcome: "ok"}); err != nil || !created {
			t.Errorf("old7 put again after its result went: created %v, %v", created, err)
		}
	})
}

// A result stored in tool_calls before migration 00026 still answers its
// call, and a later put of the same call keeps it.
func TestAToolResultStoredBeforeStillAnswers(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		if err := st.ExecOutsideTx(ctx, `INSERT INTO tool_calls (tenant_id, call_id, tool, result, created_at) VALUES ('t1', 'c1', 'add_expense', '{"first":true}', ?)`,
			pruneT0.Format(time.RFC3339Nano)); err != nil {
			t.Fatal(err)
		}
		if err := st.AppendAudit(ctx, store.AuditEntry{TenantID: "t1", ID: "c1", UserID: "ann", Tool: "add_expense", CallID: "c1", Outcome: "ok", CreatedAt: pruneT0}); err != nil {
			t.Fatal(err)
		}
		got, created, err := st.PutToolCall(ctx, store.ToolCall{TenantID: "t1", CallID: "c1", Tool: "add_expense", Result: []byte(`{"second":true}`)},
			store.AuditEntry{TenantID: "t1", ID: "c1", UserID: "ann", Tool: "add_expense", CallID: "c1", Outcome: "ok"})
		if err != nil || created || string(got.Result) != `{"first":true}` {
			t.Fatalf("a put over a result stored before = %s, created %v, %v; want the first kept", got.Result, created, err)
		}
	})
}
