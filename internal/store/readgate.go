package store

import (
	"context"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// readGate lets SQLite's reads have the read connections in the order they
// asked for them. database/sql gives a freed connection to a random waiter
// (its connRequestSet.TakeRandom), so under load a read's wait depends on
// luck rather than on how long it has waited, and a turn makes several
// reads in a row. A read takes a place here, where waiters are served
// first come first (x/sync's semaphore), before it asks the pool, holds it
// until its rows are read, and finds a connection free.
type readGate struct {
	sem *semaphore.Weighted

	waits  atomic.Int64 // reads that found no place free
	waited atomic.Int64 // their waits, in nanoseconds
}

func newReadGate(n int) *readGate { return &readGate{sem: semaphore.NewWeighted(int64(n))} }

// enter waits for a place, in turn; it returns ctx's error if ctx ends
// first, holding no place.
func (g *readGate) enter(ctx context.Context) error {
	if g.sem.TryAcquire(1) {
		return nil
	}
	g.waits.Add(1)
	start := time.Now()
	err := g.sem.Acquire(ctx, 1)
	g.waited.Add(int64(time.Since(start)))
	return err
}

// leave gives the place to the read that has waited longest.
func (g *readGate) leave() { g.sem.Release(1) }
