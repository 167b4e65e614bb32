package store

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// stmtCache keeps statements prepared once per database handle. A nil
// cache prepares nothing (Postgres: pgx keeps its own statement cache).
type stmtCache struct {
	db     *sql.DB
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	wanted map[string]bool // met inside a transaction, to prepare after it
}

// maxStmts bounds the cache: queries built from filters vary a little,
// never without bound, but a bound costs nothing.
const maxStmts = 512

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// lookup returns the statement for q if it is prepared; otherwise it
// notes q for prepareWanted and returns nil. Inside a transaction on the
// one writer connection, preparing on the database would wait for the
// very connection the transaction holds.
func (c *stmtCache) lookup(q string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st
	}
	if len(c.m)+len(c.wanted) < maxStmts {
		c.wanted[q] = true
	}
	return nil
}

// prepareWanted prepares what lookup noted; call it with no transaction
// open on this goroutine.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	if c == nil {
		return
	}
	c.mu.Lock()
	var qs []string
	for q := range c.wanted {
		qs = append(qs, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range qs {
		c.get(ctx, q)
	}
}

// get returns the prepared statement for q, or nil (run q as text).
func (c *stmtCache) get(ctx context.Context, q string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	st, ok := c.m[q]
	full := len(c.m) >= maxStmts
	c.mu.Unlock()
	if ok || full {
		return st
	}
	// Prepared outside the lock: it may wait for a connection.
	st, err := c.db.PrepareContext(context.WithoutCancel(ctx), q)
	if err != nil {
		return nil // the statement runs as text and reports its own error
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.m[q]; ok || c.m == nil {
		_ = st.Close() // prepared twice at once, or closed meanwhile
		return prev
	}
	c.m[q] = st
	return st
}

func (c *stmtCache) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		_ = st.Close()
	}
	c.m = nil
}

// txStmts are a transaction's own statements of the writer's prepared
// ones. database/sql makes a new one each time a statement is given to a
// transaction (Tx.StmtContext); a batch of the writer's runs the same
// few (its savepoints above all) again for each of its transactions, so
// each is made once a transaction here. They end with it.
type txStmts struct {
	mu sync.Mutex
	m  map[*sql.Stmt]*sql.Stmt
}

// get returns tx's statement of st.
func (c *txStmts) get(ctx context.Context, tx *sql.Tx, st *sql.Stmt) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t, ok := c.m[st]; ok {
		return t
	}
	t := tx.StmtContext(ctx, st)
	if c.m == nil {
		c.m = make(map[*sql.Stmt]*sql.Stmt, 16)
	}
	c.m[st] = t
	return t
}

// stmtQuerier runs a prepared statement, ignoring the query text it is
// given (the same text it was prepared from).
type stmtQuerier struct{ st *sql.Stmt }

func (q stmtQuerier) ExecContext(ctx context.Context, _ string, args ...any) (sql.Result, error) {
	return q.st.ExecContext(ctx, args...)
}

func (q stmtQuerier) QueryContext(ctx context.Context, _ string, args ...any) (*sql.Rows, error) {
	return q.st.QueryContext(ctx, args...)
}

func (q stmtQuerier) QueryRowContext(ctx context.Context, _ string, args ...any) *sql.Row {
	return q.st.QueryRowContext(ctx, args...)
}

// writeStats counts what the store writes.
type writeStats struct {
	statements atomic.Int64 // INSERT, UPDATE, DELETE statements
	commits    atomic.Int64 // transactions committed, single statements included
}

// WriteStats returns how many write statements the store ran and how many
// commits they took, since Open. Counted per Store from Open, shared with
// its transactions.
func (s *Store) WriteStats() (statements, commits int64) {
	return s.stats.statements.Load(), s.stats.commits.Load()
}
