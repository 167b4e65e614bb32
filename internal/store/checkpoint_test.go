package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The writer no longer copies the log into the file itself, and readers
// are always busy: the log must still start again from its beginning
// instead of growing with every write (a log of gigabytes after a day).
func TestTheLogStaysShortWhileTheWriterAndReadersAreBusy(t *testing.T) {
	every, frames := checkpointEvery, restartFrames
	checkpointEvery, restartFrames = 2*time.Millisecond, 32
	t.Cleanup(func() { checkpointEvery, restartFrames = every, frames })

	path := filepath.Join(t.TempDir(), "purser.db")
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var readers sync.WaitGroup
	for range sqliteReaders {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.PendingOutbox(ctx, 5); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}

	// Each write is a page or more: 800 of them grow the log past 800 KiB
	// when nothing but luck restarts it; restarts keep it within a few
	// times 32 pages (a bound of 16 times, for two busy cores).
	const writes = 800
	payload := []byte(strings.Repeat("x", 700))
	var largest int64
	for i := range writes {
		msg := OutboxMessage{ID: fmt.Sprintf("m%04d", i), Subject: "s", Payload: payload, CreatedAt: time.Now()}
		if err := s.AppendOutbox(ctx, []OutboxMessage{msg}); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(path + "-wal"); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	close(stop)
	readers.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if limit := int64(16 * restartFrames * (sqlitePageSize + 24)); largest > limit {
		t.Errorf("the log grew to %d KiB over %d writes, want at most %d KiB", largest>>10, writes, limit>>10)
	}

	s, err = Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pending, err := s.PendingOutbox(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != writes {
		t.Errorf("%d messages after reopening, want %d", len(pending), writes)
	}
}

// A new file is made with small pages: each index keyed by user puts a
// turn's entry on a leaf of its own, and the log holds every leaf a commit
// changes whole. A file made before keeps its pages and still opens.
func TestNewFilesHaveSmallPagesAndOldFilesKeepTheirs(t *testing.T) {
	ctx := context.Background()
	pageSize := func(path string) int {
		t.Helper()
		s, err := Open(ctx, "sqlite:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var n int
		if err := s.db.QueryRowContext(ctx, "PRAGMA page_size").Scan(&n); err != nil {
			t.Fatal(err)
		}
		var mode string
		if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != "wal" {
			t.Errorf("%s: journal mode %q, want wal", filepath.Base(path), mode)
		}
		return n
	}

	fresh := filepath.Join(t.TempDir(), "new.db")
	if got := pageSize(fresh); got != sqlitePageSize {
		t.Errorf("a new file has pages of %d bytes, want %d", got, sqlitePageSize)
	}
	if got := pageSize(fresh); got != sqlitePageSize {
		t.Errorf("reopened, the new file has pages of %d bytes, want %d", got, sqlitePageSize)
	}

	// A file made with SQLite's default pages, as purser made them before.
	old := filepath.Join(t.TempDir(), "old.db")
	if err := os.WriteFile(old, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", old+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE keep (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if got := pageSize(old); got != 4096 {
		t.Errorf("a file made with 4-KiB pages has pages of %d bytes after opening", got)
	}
	s, err := Open(ctx, "sqlite:"+old)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AppendOutbox(ctx, []OutboxMessage{{ID: "m1", Subject: "s", Payload: []byte("{}"), CreatedAt: time.Now()}}); err != nil {
		t.Fatalf("writing to the migrated old file: %v", err)
	}
}
