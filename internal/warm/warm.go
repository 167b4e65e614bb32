// Package warm runs short jobs on goroutines that outlive one job, so
// that the stack a job grew is there for the next.
//
// A new goroutine starts with a small stack, and a deep path (JSON,
// SQLite, the model loop) grows it several times, copying it each time:
// at 1,000 bench users the runtime spent 2–3% of purser's CPU copying
// stacks, most of it under goroutines started for one message, one model
// call or one request (docs/performance.md). Go runs a job on a worker
// that waits for work, or on a new one when none waits, so a job never
// waits for another; a worker left idle for Idle ends.
package warm

import (
	"sync/atomic"
	"time"
)

// Idle is how long a worker waits for a job before it ends.
const Idle = 30 * time.Second

var (
	jobs    = make(chan func()) // to a worker waiting for work
	started atomic.Int64        // workers started, for tests
	waiting atomic.Int64        // workers waiting for a job, for tests
)

// Go runs f on a goroutine of its own, as go f() does.
func Go(f func()) {
	select {
	case jobs <- f:
	default:
		started.Add(1)
		go work(f)
	}
}

// work runs f, then whatever job comes next, until none has come for Idle.
func work(f func()) {
	idle := time.NewTimer(Idle)
	defer idle.Stop()
	for {
		f()
		f = nil // not kept alive while the worker waits
		idle.Reset(Idle)
		waiting.Add(1)
		select {
		case f = <-jobs:
			waiting.Add(-1)
		case <-idle.C:
			waiting.Add(-1)
			return
		}
	}
}
