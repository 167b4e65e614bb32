package store

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// waitQueued waits until n reads wait in g.
func waitQueued(t *testing.T, g *readGate, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for g.queued() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d reads wait in the gate, want %d", g.queued(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Reads that wait have their place in the order they came, and one that
// gives up waiting leaves its place to the next: none is lost.
func TestReadGateServesReadsInTurn(t *testing.T) {
	g := newReadGate(1)
	if err := g.enter(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	gone, giveUp := context.WithCancel(context.Background())
	for i := range 8 {
		ctx := context.Background()
		if i == 3 {
			ctx = gone
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := g.enter(ctx); err != nil {
				return
			}
			mu.Lock()
			order = append(order, i) // one place: appends follow the places given
			mu.Unlock()
			g.leave()
		}()
		waitQueued(t, g, i+1)
	}
	giveUp()
	waitQueued(t, g, 7)
	g.leave()
	wg.Wait()
	want := []int{0, 1, 2, 4, 5, 6, 7}
	if len(order) != len(want) {
		t.Fatalf("places given in order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("places given in order %v, want %v", order, want)
		}
	}
	if g.free != 1 || g.queued() != 0 {
		t.Fatalf("after all: %d free, %d waiting; want 1 and 0", g.free, g.queued())
	}
	if got := g.waits.Load(); got != 8 {
		t.Fatalf("%d waits counted, want 8", got)
	}
}

// A SQLite store's reads wait in the gate, not in database/sql's pool
// (which serves its waiters in random order), and are counted as the
// readers' waits.
func TestSQLiteReadsWaitInTheGate(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "gate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range sqliteReaders {
		if err := s.rgate.enter(ctx); err != nil {
			t.Fatal(err)
		}
	}
	const reads = 6
	errs := make(chan error, reads)
	for range reads {
		go func() {
			_, err := s.LoadConversation(ctx, "t1", "c-none")
			errs <- err
		}()
	}
	waitQueued(t, s.rgate, reads)
	for range sqliteReaders {
		s.rgate.leave()
	}
	for range reads {
		if err := <-errs; !errors.Is(err, ErrNotFound) {
			t.Fatalf("read through the gate: %v, want ErrNotFound", err)
		}
	}
	if w := s.rdb.Stats().WaitCount; w != 0 {
		t.Errorf("%d reads waited in the pool", w)
	}
	if got := s.rgate.waits.Load(); got != reads {
		t.Errorf("%d waits counted in the gate, want %d", got, reads)
	}
}
