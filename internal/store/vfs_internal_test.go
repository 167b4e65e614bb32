package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// The writer's log writes go to the system gathered, and a commit that
// returned is in the files at once: a copy of the database and its log
// taken while the store is still open (what a crash would leave) holds
// every expense committed.
func TestTheLogsWritesAreGatheredAndACommitIsInTheFilesWhenItReturns(t *testing.T) {
	if vfsFailed {
		t.Fatal("the purser VFS could not be registered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	st, err := Open(ctx, "sqlite:"+filepath.Join(dir, "purser.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	gathered, written := walCalls.gathered.Load(), walCalls.written.Load()
	const n = 300
	for batch := 0; batch < 3; batch++ {
		err := st.InTx(ctx, func(tx *Store) error {
			for i := range n / 3 {
				if _, err := tx.AddExpense(ctx, Expense{TenantID: "t", UserID: "u", Item: fmt.Sprintf("coffee %d-%d", batch, i),
					AmountMinor: 350, Currency: "EUR", Date: "2026-11-01"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	gathered, written = walCalls.gathered.Load()-gathered, walCalls.written.Load()-written
	if gathered == 0 {
		t.Fatal("no write of the log went through the purser VFS")
	}
	if written*4 > gathered {
		t.Errorf("%d writes of the log reached the system for the %d SQLite made: not gathered", written, gathered)
	}

	copyDir := t.TempDir()
	for _, name := range []string{"purser.db", "purser.db-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copied, err := Open(ctx, "sqlite:"+filepath.Join(copyDir, "purser.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	got, err := copied.ListExpenses(ctx, ExpenseFilter{TenantID: "t", UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Errorf("the files copied after the commits returned hold %d expenses, want %d", len(got), n)
	}
}

// A reader keeps its map of the database file from one read to the next
// while commits come and the file keeps its size, and still reads every
// row once a checkpoint has grown the file.
func TestAReaderKeepsItsMapWhileTheFileKeepsItsSize(t *testing.T) {
	if vfsFailed {
		t.Fatal("the purser VFS could not be registered")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "purser.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	added := 0
	add := func(n int) {
		t.Helper()
		for range n {
			added++
			if _, err := st.AddExpense(ctx, Expense{TenantID: "t", UserID: "u", Item: fmt.Sprintf("tea %d", added),
				AmountMinor: 250, Currency: "EUR", Date: "2026-11-02"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func() {
		t.Helper()
		got, err := st.ListExpenses(ctx, ExpenseFilter{TenantID: "t", UserID: "u"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != added {
			t.Fatalf("a reader found %d expenses, want %d", len(got), added)
		}
	}
	checkpoint := func() {
		t.Helper()
		if _, _, err := walCheckpoint(ctx, st.db, "TRUNCATE"); err != nil {
			t.Fatal(err)
		}
	}
	add(200)
	checkpoint()
	read()
	kept := mapsKept.Load()
	for range 20 {
		add(1) // a commit: the next read starts with SQLite dropping its map
		read()
	}
	if mapsKept.Load() == kept {
		t.Error("no reader kept its map across reads while the file kept its size")
	}
	add(2000)
	checkpoint() // the file grows: the map no longer fits it
	read()
	add(1)
	read()
}
