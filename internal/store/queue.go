package store

import (
	"context"
	"errors"
	"sync"
	"time"
)

// queue hands what callers queue while its one goroutine works to that
// goroutine in batches: the request it waited for and whatever queued
// meanwhile, up to a bound. SQLite's writer and Postgres's pipeline are
// each one.
type queue[R any] struct {
	reqs chan R
	stop chan struct{}
	done chan struct{}

	mu     sync.RWMutex // put holds it shared; close takes it alone
	closed bool

	gather gathering // zero: a batch is what queued meanwhile, no more
}

// gathering lets a busy queue wait briefly for a fuller batch. Once at
// least busy requests queued while a batch was handled, the next batch
// waits up to wait for full of them: under load, requests keep coming,
// and SQLite's writer then commits more of them at once. A commit writes
// every page it changed to the log, and the pages many writes share (an
// index's upper levels, the end of a table, a user's leaf written by two
// of their writes) once per commit, so fewer, fuller commits write less
// and take less CPU a write; with the log's sync shared, a write also
// waits less in the queue (docs/performance.md, "What a turn costs, third
// pass").
// Below busy nothing waits, so a lightly used store commits at once.
type gathering struct {
	busy, full int
	wait       time.Duration
}

var errStoreClosed = errors.New("store closed")

func newQueue[R any](bound int) *queue[R] {
	return &queue[R]{reqs: make(chan R, bound), stop: make(chan struct{}), done: make(chan struct{})}
}

// put queues r, unless the store is closed or ctx ends first. A request
// put is always handed to the goroutine or refused at close.
func (q *queue[R]) put(ctx context.Context, r R) error {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if q.closed {
		return errStoreClosed
	}
	select {
	case q.reqs <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run hands batches of at most cap(reqs) to handle until close, then
// refuses what is still queued.
func (q *queue[R]) run(handle func(batch []R), refuse func(R)) {
	defer close(q.done)
	batch := make([]R, 0, cap(q.reqs))
	var timer *time.Timer
	var first R
	// queued is how many requests of the last batch were waiting when it
	// was taken, before any wait for more: what queued while the commit
	// before it ran. Judged by the whole batch, a wait would keep itself
	// going, since what it gathered makes the next batch look busy too.
	queued := 0
	for {
		select {
		case first = <-q.reqs:
		case <-q.stop:
			for {
				select {
				case r := <-q.reqs:
					refuse(r)
				default:
					return
				}
			}
		}
		gather := q.gather.wait > 0 && queued >= q.gather.busy
		batch = append(batch[:0], first)
		queued = -1
		var deadline <-chan time.Time
	more:
		for len(batch) < cap(batch) {
			select {
			case r := <-q.reqs:
				batch = append(batch, r)
				continue
			default:
			}
			if queued < 0 {
				queued = len(batch)
			}
			if !gather || len(batch) >= q.gather.full {
				break
			}
			if deadline == nil {
				timer = resetTimer(timer, q.gather.wait)
				deadline = timer.C
			}
			select {
			case r := <-q.reqs:
				batch = append(batch, r)
			case <-deadline:
				break more
			}
		}
		if deadline != nil {
			timer.Stop()
		}
		if queued < 0 {
			queued = len(batch) // full before the queue ran dry
		}
		handle(batch)
	}
}

// close stops the goroutine after the batch it is handling, and waits
// for it.
func (q *queue[R]) close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.stop)
	}
	q.mu.Unlock()
	<-q.done
}

// resetTimer is t set to fire after d, made if nil. A timer stopped
// before firing has nothing to drain (Go 1.23 timers).
func resetTimer(t *time.Timer, d time.Duration) *time.Timer {
	if t == nil {
		return time.NewTimer(d)
	}
	t.Reset(d)
	return t
}
