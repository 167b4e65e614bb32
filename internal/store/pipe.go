package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/prometheus/client_golang/prometheus"
)

// pipe groups the single statements that callers make at once on
// Postgres outside a transaction (a frame, a user's message, a
// conversation with its outbox rows, a tool call with its audit entry, a
// proposal's transition; the reads a turn makes most, such as its
// conversation with its owner's settings or a turn's frames) into one
// round trip and one
// commit. Postgres spends more of its time taking a statement from the
// network and waking up for it than running it, and flushes its log once
// per commit: a pipeline of a hundred statements is one wake-up and one
// flush instead of a hundred of each. A read in a pipeline sees what was
// committed before it was sent and the writes sent before it in its
// pipeline; its caller's own writes were committed before it asked.
//
// The statements of one batch run as one transaction: either all are
// committed or none is. When the server refuses one of them (a frame's
// event stored before, a deadlock, bad content), the batch is rolled back
// and each statement runs again on its own, so that only the refused one
// fails. A batch lost with its connection is an error for every caller:
// whether it was committed is unknown, as for a single statement.
type pipe struct {
	db     *sql.DB
	stats  *writeStats
	q      *queue[*pipeReq]
	sizes  prometheus.Histogram // statements a pipeline sent
	reruns atomic.Int64         // pipelines run again statement by statement
}

type pipeReq struct {
	ctx  context.Context
	q    string // rebound for Postgres
	args []any
	dest []any // the row's columns for a statement that returns one; nil for Exec
	// rows reads every row of a query; it may be called again from the
	// start when the batch runs again statement by statement.
	rows func(rowScanner) error
	read bool  // a SELECT: counted as no write
	n    int64 // rows affected (Exec)
	err  error
	done chan struct{}
}

// maxPipe bounds the statements of one pipeline.
const maxPipe = 128

// pipeLockTimeout starts every pipeline: a statement of it that waits
// for a row another transaction holds (a tool's change being made, say)
// fails after a moment instead of holding up the whole batch, which then
// runs statement by statement, where only that one waits.
const pipeLockTimeout = `SELECT set_config('lock_timeout', '200ms', true)`

// pipeTimeout bounds one pipeline: its statements no longer follow their
// callers' cancellation once sent, since one interrupted statement would
// roll back the others.
const pipeTimeout = 30 * time.Second

func newPipe(db *sql.DB, stats *writeStats) *pipe {
	p := &pipe{db: db, stats: stats, q: newQueue[*pipeReq](maxPipe), sizes: newPipeMetrics()}
	go p.q.run(p.send, func(r *pipeReq) {
		r.err = errStoreClosed
		close(r.done)
	})
	return p
}

// exec runs q and returns the rows it affected, once committed.
func (p *pipe) exec(ctx context.Context, q string, args []any) (int64, error) {
	r := newPipeReq(ctx, q, args)
	err := p.send1(r)
	return r.n, err
}

// row runs q, which returns one row, and scans it into dest once
// committed. No row is sql.ErrNoRows.
func (p *pipe) row(ctx context.Context, q string, args []any, dest ...any) error {
	r := newPipeReq(ctx, q, args)
	r.dest = dest
	return p.send1(r)
}

// readRow runs the SELECT q, which returns one row, and scans it into
// dest. No row is sql.ErrNoRows. It sees what was committed before it
// was sent, and the writes sent before it in its pipeline.
func (p *pipe) readRow(ctx context.Context, q string, args []any, dest ...any) error {
	r := newPipeReq(ctx, q, args)
	r.dest, r.read = dest, true
	return p.send1(r)
}

// readRows runs the SELECT q and hands its rows to each. each starts
// again from the first row if the pipeline it was in runs again.
func (p *pipe) readRows(ctx context.Context, q string, args []any, each func(rowScanner) error) error {
	r := newPipeReq(ctx, q, args)
	r.rows, r.read = each, true
	return p.send1(r)
}

func newPipeReq(ctx context.Context, q string, args []any) *pipeReq {
	return &pipeReq{ctx: ctx, q: q, args: args, done: make(chan struct{})}
}

// send1 queues r and waits for its outcome.
func (p *pipe) send1(r *pipeReq) error {
	if err := p.q.put(r.ctx, r); err != nil {
		return err
	}
	<-r.done // once taken, a request is always answered
	return r.err
}

// send runs batch as one pipeline and answers each request: at once, or,
// when the batch is to run again statement by statement, from a goroutine
// of each statement's own, so that one waiting for a lock holds up no
// other.
func (p *pipe) send(batch []*pipeReq) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.err = err
			close(r.done)
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), pipeTimeout)
	defer cancel()
	rerun, err := p.pipeline(ctx, live)
	p.sizes.Observe(float64(len(live)))
	switch {
	case rerun:
		p.reruns.Add(1)
		// Nothing of the batch was committed: run each on its own.
		for _, r := range live {
			go p.alone(r)
		}
		return
	case err != nil:
		for _, r := range live {
			r.err = contentError(err)
		}
	default:
		p.count(live...)
	}
	for _, r := range live {
		close(r.done)
	}
}

// count records the writes among reqs, committed together.
func (p *pipe) count(reqs ...*pipeReq) {
	writes := 0
	for _, r := range reqs {
		if !r.read {
			writes++
		}
	}
	if writes > 0 {
		p.stats.statements.Add(int64(writes))
		p.stats.commits.Add(1)
	}
}

// pipeline sends the statements in one round trip, as one transaction,
// and sets each one's outcome. rerun says that none was committed, and
// that the server refused one of them or the batch was never sent: each
// is to run again on its own. err is the batch's error otherwise: every
// statement's outcome is then unknown.
func (p *pipe) pipeline(ctx context.Context, batch []*pipeReq) (rerun bool, err error) {
	conn, err := p.db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("pipeline: a %T is not a pgx connection", dc)
		}
		b := &pgx.Batch{}
		b.Queue(pipeLockTimeout)
		for _, r := range batch {
			b.Queue(r.q, r.args...)
		}
		br := c.Conn().SendBatch(ctx, b)
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
		for _, r := range batch {
			switch {
			case r.rows != nil:
				rows, err := br.Query()
				if err == nil {
					err = r.rows(rows)
					rows.Close()
				}
				if err == nil {
					err = rows.Err()
				}
				r.err = err
			case r.dest != nil:
				r.err = br.QueryRow().Scan(r.dest...)
				if errors.Is(r.err, pgx.ErrNoRows) {
					r.err = sql.ErrNoRows
				}
			default:
				var tag pgconn.CommandTag
				tag, r.err = br.Exec()
				r.n = tag.RowsAffected()
			}
		}
		return br.Close()
	})
	if unsent(err) {
		return true, nil
	}
	for _, r := range batch {
		if unsent(r.err) {
			return true, nil
		}
	}
	return false, err
}

// unsent reports whether err leaves a batch uncommitted: the server
// refused a statement (and so rolled back the batch's transaction), or the
// batch was never sent.
func unsent(err error) bool {
	var pg *pgconn.PgError
	var pre pgx.ErrPreprocessingBatch
	return errors.As(err, &pg) || errors.As(err, &pre) || pgconn.SafeToRetry(err)
}

// alone runs r as a statement of its own and answers it.
func (p *pipe) alone(r *pipeReq) {
	defer close(r.done)
	ctx, cancel := context.WithTimeout(context.Background(), pipeTimeout)
	defer cancel()
	switch {
	case r.rows != nil:
		var rows *sql.Rows
		if rows, r.err = p.db.QueryContext(ctx, r.q, r.args...); r.err == nil {
			r.err = r.rows(rows)
			rows.Close()
			if r.err == nil {
				r.err = rows.Err()
			}
		}
	case r.dest != nil:
		r.err = p.db.QueryRowContext(ctx, r.q, r.args...).Scan(r.dest...)
	default:
		var res sql.Result
		if res, r.err = p.db.ExecContext(ctx, r.q, r.args...); r.err == nil {
			r.n, r.err = res.RowsAffected()
		}
	}
	if r.err == nil || errors.Is(r.err, sql.ErrNoRows) {
		p.count(r)
	}
	r.err = contentError(r.err)
}

// close stops the pipe after the batch it is sending; what is still
// queued gets an error.
func (p *pipe) close() { p.q.close() }
