package store

import (
	"context"
	"errors"
	"sync"
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
	for {
		select {
		case r := <-q.reqs:
			batch = append(batch[:0], r)
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
	more:
		for len(batch) < cap(batch) {
			select {
			case r := <-q.reqs:
				batch = append(batch, r)
			default:
				break more
			}
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
