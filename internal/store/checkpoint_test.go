package store

import (
	"context"
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

	// Each write is a page or more: 800 of them grow the log past 3 MiB
	// when nothing but luck restarts it; restarts keep it within a few
	// times 32 pages (0.8–1.07 MiB seen with the package's other tests
	// running beside it on two cores, hence a bound of 16 times).
	const writes = 800
	payload := []byte(strings.Repeat("x", 3000))
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
	if limit := int64(16 * restartFrames * 4096); largest > limit {
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
