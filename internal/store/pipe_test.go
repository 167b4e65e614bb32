package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// pipelined runs n statements on Postgres so that all of them wait for
// the pipeline together, and returns the commits the store counted for
// them.
func pipelined(t *testing.T, s *store.Store, n int, write func(i int)) int64 {
	t.Helper()
	release := holdPipeline(t, s)
	_, before := s.WriteStats()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() { defer wg.Done(); write(i) }()
	}
	waitFor(t, func() bool { return s.PipeQueued() == n })
	release()
	wg.Wait()
	_, after := s.WriteStats()
	return after - before - 1 // less the statement that held the pipeline
}

// holdPipeline makes the pipeline wait, with a statement of the test's
// that waits for a connection while the test holds every connection of
// the pool, until the function it returns is called: what is queued
// meanwhile goes in the next batch.
func holdPipeline(t *testing.T, s *store.Store) (release func()) {
	t.Helper()
	ctx := context.Background()
	giveBack, err := s.HoldConnections(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waits := s.ConnectionWaits()
	held := make(chan error, 1)
	go func() { held <- s.ExecOutsideTx(ctx, `SELECT 1`) }()
	waitFor(t, func() bool { return s.ConnectionWaits() > waits })
	return func() {
		giveBack()
		if err := <-held; err != nil {
			t.Error(err)
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

// Frames that arrive at once on Postgres are stored in one round trip and
// one commit, each with its own seq, in the order of each user's.
func TestPostgresWritesAtOnceShareOneCommit(t *testing.T) {
	t.Parallel()
	dsn := storetest.PostgresDSN(t)
	s := storetest.Open(t, dsn)
	ctx := context.Background()
	const n = 60
	commits := pipelined(t, s, n, func(i int) {
		_, created, err := s.AppendConversationFrame(ctx, "acme", fmt.Sprintf("u%d", i%3), "c", fmt.Sprintf("ev-%d", i),
			fmt.Appendf(nil, `{"type":"answer","turn_id":"t%d"}`, i), time.Now())
		if err != nil || !created {
			t.Errorf("frame %d: created %v, %v", i, created, err)
		}
	})
	if commits != 1 {
		t.Errorf("%d frames queued at once took %d commits, want 1", n, commits)
	}
	for u := range 3 {
		frames, err := s.FramesAfter(ctx, "acme", fmt.Sprintf("u%d", u), 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(frames) != n/3 {
			t.Fatalf("u%d has %d frames, want %d", u, len(frames), n/3)
		}
		for k, f := range frames {
			if f.Seq != int64(k+1) {
				t.Errorf("u%d: frame %d has seq %d, want %d (no gaps, none twice)", u, k, f.Seq, k+1)
			}
		}
	}
}

// A statement the server refuses fails alone: a redelivered frame gets the
// seq it was first given, a title Postgres cannot hold is refused as
// invalid content, and the writes queued with them are stored, with no
// seq burned.
func TestPostgresRefusedWriteFailsAlone(t *testing.T) {
	t.Parallel()
	dsn := storetest.PostgresDSN(t)
	s := storetest.Open(t, dsn)
	ctx := context.Background()
	first, _, err := s.AppendConversationFrame(ctx, "acme", "u0", "c", "ev-again", []byte(`{"type":"answer","turn_id":"t"}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	errs := make([]error, n)
	created := make([]bool, n)
	seqs := make([]int64, n)
	pipelined(t, s, n, func(i int) {
		switch i {
		case 5: // a redelivery
			seqs[i], created[i], errs[i] = s.AppendConversationFrame(ctx, "acme", "u0", "c", "ev-again", []byte(`{"type":"answer","turn_id":"t"}`), time.Now())
		case 9: // a NUL in a title
			seqs[i], created[i], errs[i] = s.AppendUserMessage(ctx, "acme", "u0", "c", "ev-nul", "a\x00b", []byte(`{"type":"user_message"}`), time.Now())
		default:
			seqs[i], created[i], errs[i] = s.AppendConversationFrame(ctx, "acme", "u0", "c", fmt.Sprintf("ev-%d", i), []byte(`{"type":"answer","turn_id":"t"}`), time.Now())
		}
	})
	if errs[5] != nil || created[5] || seqs[5] != first {
		t.Errorf("redelivered frame: seq %d created %v err %v, want seq %d, not created", seqs[5], created[5], errs[5], first)
	}
	if !errors.Is(errs[9], store.ErrInvalidContent) {
		t.Errorf("title with a NUL: %v, want invalid content", errs[9])
	}
	frames, err := s.FramesAfter(ctx, "acme", "u0", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != n-1 { // the first, and the 18 new ones
		t.Fatalf("%d frames stored, want %d", len(frames), n-1)
	}
	for k, f := range frames {
		if f.Seq != int64(k+1) {
			t.Errorf("frame %d has seq %d, want %d", k, f.Seq, k+1)
		}
	}
	for i := range n {
		if i != 5 && i != 9 && (errs[i] != nil || !created[i]) {
			t.Errorf("frame %d: created %v, %v", i, created[i], errs[i])
		}
	}
}

// Reads made at once go in the pipeline too, in the same round trip as the
// writes: they find what is stored (or nothing, as ErrNotFound), and count
// as no write.
func TestPostgresReadsShareThePipeline(t *testing.T) {
	t.Parallel()
	dsn := storetest.PostgresDSN(t)
	s := storetest.Open(t, dsn)
	ctx := context.Background()
	c := store.Conversation{TenantID: "acme", ConversationID: "c1", UserID: "u0", State: []byte(`{"history":[]}`), UpdatedAt: time.Now()}
	if _, err := s.SaveConversation(ctx, c, 0, nil); err != nil {
		t.Fatal(err)
	}
	const frames, loads, missing = 20, 10, 5
	statements, _ := s.WriteStats()
	errs := make([]error, frames+loads+missing)
	users := make([]string, frames+loads+missing)
	commits := pipelined(t, s, len(errs), func(i int) {
		switch {
		case i < frames:
			_, _, errs[i] = s.AppendConversationFrame(ctx, "acme", "u0", "c1", fmt.Sprintf("ev-%d", i), []byte(`{"type":"answer","turn_id":"t"}`), time.Now())
		case i < frames+loads:
			var got store.Conversation
			got, _, errs[i] = s.LoadConversationIfChanged(ctx, "acme", "u0", "c1", 0)
			users[i] = got.UserID
		default:
			_, errs[i] = s.LoadConversation(ctx, "acme", "u0", "nope")
		}
	})
	for i, err := range errs {
		switch {
		case i < frames+loads && err != nil:
			t.Errorf("statement %d: %v", i, err)
		case i >= frames && i < frames+loads && users[i] != "u0":
			t.Errorf("load %d found user %q, want u0", i, users[i])
		case i >= frames+loads && !errors.Is(err, store.ErrNotFound):
			t.Errorf("load of a missing conversation: %v, want ErrNotFound", err)
		}
	}
	if commits != 1 {
		t.Errorf("%d statements queued at once took %d commits, want 1", len(errs), commits)
	}
	after, _ := s.WriteStats()
	if after-statements != frames+1 { // and the statement that held the pipeline
		t.Errorf("%d write statements counted, want %d", after-statements, frames+1)
	}
}

// A statement that waits for a row another transaction holds does not hold
// up the statements sent with it: they are stored while it waits, and it
// is stored once the row is free.
func TestPostgresLockedRowHoldsUpNoOtherWrite(t *testing.T) {
	t.Parallel()
	dsn := storetest.PostgresDSN(t)
	s := storetest.Open(t, dsn)
	ctx := context.Background()
	if _, _, err := s.AppendConversationFrame(ctx, "acme", "ux", "c", "ev-first", []byte(`{"type":"answer","turn_id":"t"}`), time.Now()); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	holder, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	var v int64
	if err := holder.QueryRowContext(ctx, `SELECT value FROM counters WHERE tenant_id = 'acme' AND user_id = 'ux' AND name = 'frame' FOR UPDATE`).Scan(&v); err != nil {
		t.Fatal(err)
	}

	const others = 20
	release := holdPipeline(t, s)
	var wg sync.WaitGroup
	for i := range others {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := s.AppendConversationFrame(ctx, "acme", fmt.Sprintf("u%d", i), "c", "ev", []byte(`{"type":"answer","turn_id":"t"}`), time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	locked := make(chan error, 1)
	var lockedSeq int64
	go func() {
		var err error
		lockedSeq, _, err = s.AppendConversationFrame(ctx, "acme", "ux", "c", "ev-second", []byte(`{"type":"answer","turn_id":"t"}`), time.Now())
		locked <- err
	}()
	waitFor(t, func() bool { return s.PipeQueued() == others+1 })
	release()

	othersDone := make(chan struct{})
	go func() { wg.Wait(); close(othersDone) }()
	select {
	case <-othersDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the writes sent with one that waits for a locked row were held up with it")
	}
	select {
	case err := <-locked:
		t.Fatalf("the write of a locked row finished while the row was locked: %v", err)
	default:
	}
	if err := holder.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatal(err)
	}
	if lockedSeq != 2 {
		t.Errorf("the write that waited got seq %d, want 2", lockedSeq)
	}
}

// A query of many rows sent before a refused statement is read again when
// the batch runs statement by statement: its caller gets the rows once.
func TestPostgresRowsReadAgainAfterARefusal(t *testing.T) {
	t.Parallel()
	dsn := storetest.PostgresDSN(t)
	s := storetest.Open(t, dsn)
	ctx := context.Background()
	for i := range 3 {
		if _, _, err := s.AppendConversationFrame(ctx, "acme", "ur", "c", fmt.Sprintf("ev-r%d", i), []byte(`{"type":"answer","turn_id":"tr"}`), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.AppendConversationFrame(ctx, "acme", "u0", "c", "ev-again", []byte(`{"type":"answer","turn_id":"t"}`), time.Now()); err != nil {
		t.Fatal(err)
	}
	release := holdPipeline(t, s)
	read := make(chan []store.Frame, 1)
	go func() {
		frames, err := s.FramesOfTurn(ctx, "acme", "ur", "tr", 10)
		if err != nil {
			t.Error(err)
		}
		read <- frames
	}()
	waitFor(t, func() bool { return s.PipeQueued() == 1 }) // the read goes first
	again := make(chan error, 1)
	go func() {
		_, created, err := s.AppendConversationFrame(ctx, "acme", "u0", "c", "ev-again", []byte(`{"type":"answer","turn_id":"t"}`), time.Now())
		if err == nil && created {
			err = errors.New("stored twice")
		}
		again <- err
	}()
	waitFor(t, func() bool { return s.PipeQueued() == 2 })
	release()
	if err := <-again; err != nil {
		t.Fatalf("redelivered frame: %v", err)
	}
	frames := <-read
	if len(frames) != 3 {
		t.Fatalf("got %d frames of the turn, want its 3 once: %v", len(frames), frames)
	}
	for k, f := range frames {
		if f.Seq != int64(k+1) {
			t.Errorf("frame %d has seq %d, want %d", k, f.Seq, k+1)
		}
	}
}

// A tool's change on Postgres (an expense and the call's result with its
// audit entry, in one transaction) is two statements, each one round trip:
// the expense with its number, and the result with its audit entry.
func TestPostgresToolChangeIsTwoStatements(t *testing.T) {
	t.Parallel()
	s := storetest.Open(t, storetest.PostgresDSN(t))
	ctx := context.Background()
	statements, commits := s.WriteStats()
	var added store.Expense
	err := s.InTx(ctx, func(tx *store.Store) error {
		var err error
		added, err = tx.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "u0", Item: "coffee", AmountMinor: 350, Currency: "GBP", Date: "2026-11-26", Category: "food"})
		if err != nil {
			return err
		}
		_, _, err = tx.PutToolCall(ctx, store.ToolCall{TenantID: "acme", CallID: "c1", Tool: "add_expense", Result: []byte(`{"ok":true}`)},
			store.AuditEntry{TenantID: "acme", ID: "a1", UserID: "u0", Tool: "add_expense", CallID: "c1", Outcome: "ok", Args: []byte(`{}`)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	afterStatements, afterCommits := s.WriteStats()
	if n := afterStatements - statements; n != 2 {
		t.Errorf("the change took %d write statements, want 2", n)
	}
	if n := afterCommits - commits; n != 1 {
		t.Errorf("the change took %d commits, want 1", n)
	}
	if added.ID != 1 {
		t.Errorf("the first expense got number %d, want 1", added.ID)
	}
	got, err := s.GetExpense(ctx, "acme", "u0", added.ID)
	if err != nil || got.Item != "coffee" || got.AmountMinor != 350 {
		t.Errorf("stored expense %+v, %v", got, err)
	}
	if c, err := s.GetToolCall(ctx, "acme", "c1"); err != nil || c.Tool != "add_expense" {
		t.Errorf("stored call %+v, %v", c, err)
	}
}
