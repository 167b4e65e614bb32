package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// waitWaits waits until n reads have found no place free in g.
func waitWaits(t *testing.T, g *readGate, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for g.waits.Load() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d reads waited in the gate, want %d", g.waits.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A read that gives up waiting holds no place: the next read gets it.
func TestReadGateGivingUpHoldsNoPlace(t *testing.T) {
	g := newReadGate(1)
	if err := g.enter(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, giveUp := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- g.enter(ctx) }()
	waitWaits(t, g, 1)
	giveUp()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a read that gave up: %v, want context.Canceled", err)
	}
	g.leave()
	if err := g.enter(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.sem.TryAcquire(1) {
		t.Fatal("two reads hold the gate's one place")
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
			_, err := s.LoadConversation(ctx, "t1", "u1", "c-none")
			errs <- err
		}()
	}
	waitWaits(t, s.rgate, reads)
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
	if s.rgate.waited.Load() == 0 {
		t.Error("the gate's waits took no time")
	}
}
