package store

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"
)

// batcher is SQLite's one writer: write transactions queued by any
// number of goroutines run one after another on the one write connection,
// and those that queued meanwhile share one commit, each inside a
// savepoint of its own so that one failing rolls back only itself. A
// commit is the expensive part of a write (the WAL's fsync); sharing it is
// how many handlers writing at once stay cheap. Nothing is reported done
// before its commit.
type batcher struct {
	s *Store // the root store
	q *queue[*batchReq]

	busy    atomic.Int64 // nanoseconds spent on batches
	metrics *writerMetrics
}

type batchReq struct {
	ctx  context.Context
	fn   func(tx *Store) error
	err  error
	done chan struct{}
}

// maxBatch bounds the transactions one commit takes.
const maxBatch = 128

// writerGathering is how SQLite's writer waits for fuller commits under
// load (see gathering): once 8 transactions queued during a commit, the
// next commit waits up to 10 ms for 128. At 1,000 bench users, where the
// writer is the bottleneck, commits then hold about 15-19 transactions
// instead of 8-9 (200-340 commits/s instead of 470-540). A commit writes
// each page it changed once, whatever number of transactions changed it:
// the commit's share of purser's CPU fell from 11.6% to 6.9% in
// profiles, and a turn writes about 2 KB less. At 300 users, where a
// few queue during a commit, nothing waits: commits hold 1.3
// transactions either way and the first token's p50 is unchanged
// (docs/performance.md, "What a turn costs, seventh pass"; 4 ms for 64
// before, third pass). The bar was 16 until the log's writes were
// gathered (vfs.go): the faster writer then saw fewer than 16 queued
// more often, and committed 190-270 times a second instead of 150-190,
// writing 29.5-31.1 KB a turn instead of 27-28; with 8, 152-158 times and
// 25.7-28.8 KB (docs/performance.md, "twelfth pass").
var writerGathering = gathering{busy: 8, full: 128, wait: 10 * time.Millisecond}

func newBatcher(s *Store) *batcher {
	b := &batcher{s: s, q: newQueue[*batchReq](maxBatch), metrics: newWriterMetrics()}
	b.q.gather = writerGathering
	go b.q.run(b.write, func(r *batchReq) {
		r.err = errStoreClosed
		close(r.done)
	})
	return b
}

// do runs fn in a transaction shared with others and returns once it is
// committed (nil) or rolled back (fn's error, or the commit's).
func (b *batcher) do(ctx context.Context, fn func(tx *Store) error) error {
	r := &batchReq{ctx: ctx, fn: fn, done: make(chan struct{})}
	queued := time.Now()
	if err := b.q.put(ctx, r); err != nil {
		return err
	}
	<-r.done // once taken, a request is always answered
	if r.err == nil {
		b.metrics.write.Observe(time.Since(queued).Seconds())
	}
	return r.err
}

// write commits a batch, lets the checkpointer's turn come, and records
// what it took.
func (b *batcher) write(batch []*batchReq) {
	start := time.Now()
	b.commit(batch)
	b.s.ckpt.writerTurn(b.s.db)
	b.busy.Add(int64(time.Since(start)))
	b.metrics.batch.Observe(float64(len(batch)))
}

// commit runs the batch in one transaction.
func (b *batcher) commit(batch []*batchReq) {
	s := b.s
	answer := func(err error) {
		for _, r := range batch {
			if r.err == nil {
				r.err = err
			}
			close(r.done)
		}
	}
	tx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		answer(fmt.Errorf("begin: %w", err))
		return
	}
	child := s.inTx(tx, true)
	defer child.ended.run() // after the answers: a caller that reads in between only reads again later
	ok := 0
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			continue
		}
		// Statements run without the caller's cancellation: an interrupt
		// would roll back the whole shared transaction, not one savepoint.
		ctx := context.WithoutCancel(r.ctx)
		if _, err := child.control(ctx, "SAVEPOINT w"); err != nil {
			_ = tx.Rollback()
			answer(fmt.Errorf("savepoint: %w", err))
			return
		}
		if err := runFn(r.fn, child); err != nil {
			r.err = err
			if _, rerr := child.control(ctx, "ROLLBACK TO w"); rerr != nil {
				_ = tx.Rollback()
				answer(fmt.Errorf("rollback to savepoint: %w (after %w)", rerr, err))
				return
			}
		} else {
			ok++
		}
		if _, err := child.control(ctx, "RELEASE w"); err != nil {
			_ = tx.Rollback()
			answer(fmt.Errorf("release savepoint: %w", err))
			return
		}
	}
	if ok == 0 {
		_ = tx.Rollback()
		answer(nil)
		return
	}
	if err := tx.Commit(); err != nil {
		answer(fmt.Errorf("commit: %w", err))
		return
	}
	s.stats.commits.Add(1)
	answer(nil)
	s.wstmts.prepareWanted(context.Background())
}

// close stops the writer after the batch it is running; what is still
// queued gets an error.
func (b *batcher) close() { b.q.close() }

// control runs a savepoint's statement, prepared once like any other
// (parsing it again for every transaction of a batch is most of its cost),
// and not counted as a write.
func (s *Store) control(ctx context.Context, q string) (sql.Result, error) {
	return s.target(ctx, q, false).ExecContext(ctx, q)
}

// runFn runs fn, turning a panic into its error: the writer serves
// everyone and must not die with one caller.
func runFn(fn func(tx *Store) error, tx *Store) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in transaction: %v", p)
		}
	}()
	return fn(tx)
}
