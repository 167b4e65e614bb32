package store

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// readGate lets SQLite's reads have the read connections in the order they
// asked for them. database/sql gives a freed connection to a random
// waiter, so when hundreds of reads wait for four connections some wait
// many times as long as the rest, and a turn makes several reads in a row.
// A read passes the gate before it asks the pool, holds its place until
// its rows are read, and finds a connection free.
type readGate struct {
	mu    sync.Mutex
	free  int
	queue []chan struct{} // waiting reads, first come first

	waits  atomic.Int64 // reads that waited
	waited atomic.Int64 // their waits, in nanoseconds
}

func newReadGate(n int) *readGate { return &readGate{free: n} }

// enter waits for a place, in turn; it returns ctx's error if ctx ends
// first, holding no place.
func (g *readGate) enter(ctx context.Context) error {
	g.mu.Lock()
	if g.free > 0 && len(g.queue) == 0 {
		g.free--
		g.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	g.queue = append(g.queue, turn)
	g.mu.Unlock()
	start := time.Now()
	defer func() {
		g.waits.Add(1)
		g.waited.Add(int64(time.Since(start)))
	}()
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	if i := slices.Index(g.queue, turn); i >= 0 {
		g.queue = slices.Delete(g.queue, i, i+1)
		g.mu.Unlock()
		return ctx.Err()
	}
	g.mu.Unlock()
	g.leave() // given a place as ctx ended: the next read has it
	return ctx.Err()
}

// leave gives the place to the read that has waited longest.
func (g *readGate) leave() {
	g.mu.Lock()
	if len(g.queue) > 0 {
		turn := g.queue[0]
		g.queue = g.queue[1:]
		g.mu.Unlock()
		close(turn)
		return
	}
	g.free++
	g.mu.Unlock()
}

// queued is how many reads wait.
func (g *readGate) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}
