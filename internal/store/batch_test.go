package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// Many SQLite write transactions at once share commits, and one that
// fails (or panics) rolls back its own writes only.
func TestConcurrentTransactionsShareCommitsAndFailAlone(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	_, commits0 := st.WriteStats()
	const n = 60
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = st.InTx(ctx, func(tx *store.Store) error {
				if err := tx.AppendOutbox(ctx, []store.OutboxMessage{{ID: fmt.Sprintf("m%02d", i), Subject: "s", Payload: []byte("x"), CreatedAt: now}}); err != nil {
					return err
				}
				switch i % 10 {
				case 3:
					return errors.New("refused")
				case 7:
					panic("boom")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if (i%10 == 3 || i%10 == 7) != (err != nil) {
			t.Errorf("transaction %d: err %v", i, err)
		}
	}
	pending, err := st.PendingOutbox(ctx, 200)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range pending {
		got[m.ID] = true
	}
	for i := range n {
		if want := i%10 != 3 && i%10 != 7; got[fmt.Sprintf("m%02d", i)] != want {
			t.Errorf("message of transaction %d stored: %v, want %v", i, !want, want)
		}
	}
	if _, commits := st.WriteStats(); commits-commits0 >= n {
		t.Logf("%d commits for %d transactions: none shared one (possible when they never overlapped)", commits-commits0, n)
	}
}

// A caller that gives up inside a SQLite transaction cannot interrupt the
// transaction it shares with others: its statements run to the end, and
// what it wrote is committed like the rest (interrupting a write would
// roll back everyone's).
func TestCancelInsideASharedTransactionInterruptsNothing(t *testing.T) {
	t.Parallel()
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	ctx, cancel := context.WithCancel(context.Background())
	err := st.InTx(ctx, func(tx *store.Store) error {
		cancel()
		return tx.AppendOutbox(ctx, []store.OutboxMessage{{ID: "late", Subject: "s", Payload: []byte("x"), CreatedAt: time.Now()}})
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	pending, err := st.PendingOutbox(context.Background(), 10)
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending %v, %v: want the one message committed", pending, err)
	}
}
