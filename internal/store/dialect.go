package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

const (
	dialectSQLite   = "sqlite"
	dialectPostgres = "postgres"
)

// dialect holds the few real differences between the engines. Queries are
// written once, with '?' placeholders; column types (BLOB/BYTEA, TEXT
// timestamps/TIMESTAMPTZ, autoincrement) live in the per-engine migrations.
type dialect struct {
	name       string
	dollarArgs bool // Postgres: rebind ? to $1, $2, ...
	textTime   bool // SQLite: times as fixed-width RFC 3339 text, so they sort
}

var (
	sqliteDialect   = dialect{name: dialectSQLite, textTime: true}
	postgresDialect = dialect{name: dialectPostgres, dollarArgs: true}
)

// rebind rewrites '?' placeholders for the engine. Queries in this package
// never contain a literal '?'.
func (d dialect) rebind(q string) string {
	if !d.dollarArgs {
		return q
	}
	if r, ok := rebound.Load(q); ok {
		return r.(string)
	}
	r := dollarArgs(q)
	if rebound.n.Load() < maxRebound {
		if _, loaded := rebound.LoadOrStore(q, r); !loaded {
			rebound.n.Add(1)
		}
	}
	return r
}

// rebound keeps the queries rebind rewrote: a Postgres statement was
// rewritten twice each time it ran (to find its prepared statement, then
// to run it), a new string each time. The package's queries are
// constants or built from a few shapes, so a bound is never reached in
// practice; past it, queries are rewritten each time as before.
var rebound struct {
	sync.Map
	n atomic.Int64
}

const maxRebound = 4096

// dollarArgs numbers q's placeholders: $1, $2, ...
func dollarArgs(q string) string {
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// textTimeLayout is fixed width, so text comparison is time order.
const textTimeLayout = "2006-01-02T15:04:05.000000Z"

// normTime is what the store keeps of t: UTC, microseconds (Postgres's
// precision, applied to SQLite too so both engines round-trip alike).
func normTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// ts is the query argument for an instant.
func (d dialect) ts(t time.Time) any {
	t = normTime(t)
	if d.textTime {
		return t.Format(textTimeLayout)
	}
	return t
}

// optTS is the query argument for an optional instant (NULL when nil).
func (d dialect) optTS(t *time.Time) any {
	if t == nil {
		return nil
	}
	return d.ts(*t)
}

// timeCol scans an instant stored by ts.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(v any) error {
	t, ok, err := parseTimeValue(v)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("scan time: NULL")
	}
	*c.t = t
	return nil
}

// optTimeCol scans an optional instant; NULL becomes nil.
type optTimeCol struct{ t **time.Time }

func (c optTimeCol) Scan(v any) error {
	t, ok, err := parseTimeValue(v)
	if err != nil {
		return err
	}
	if !ok {
		*c.t = nil
		return nil
	}
	*c.t = &t
	return nil
}

func parseTimeValue(v any) (time.Time, bool, error) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, false, nil
	case time.Time:
		return normTime(x), true, nil
	case string:
		return parseTimeText(x)
	case []byte:
		return parseTimeText(string(x))
	default:
		return time.Time{}, false, fmt.Errorf("scan time: unexpected %T", v)
	}
}

func parseTimeText(s string) (time.Time, bool, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return normTime(t), true, nil
		}
	}
	return time.Time{}, false, fmt.Errorf("scan time: bad value %q", s)
}

// jsonArg is the query argument for opaque JSON: NULL when empty, else text
// (kept byte for byte on both engines).
func jsonArg(m json.RawMessage) any {
	if len(m) == 0 {
		return nil
	}
	return string(m)
}

// jsonCol scans JSON text; NULL becomes nil.
type jsonCol struct{ m *json.RawMessage }

func (c jsonCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.m = nil
	case string:
		*c.m = json.RawMessage(x)
	case []byte:
		*c.m = append(json.RawMessage(nil), x...)
	default:
		return fmt.Errorf("scan json: unexpected %T", v)
	}
	return nil
}

// blobArg never passes a nil slice: pgx would send it as NULL.
func blobArg(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// exec runs a write: in the transaction, or on its own (one commit; on
// SQLite shared with the writes queued with it).
func (s *Store) exec(ctx context.Context, q string, args ...any) (int64, error) {
	if s.shared {
		ctx = context.WithoutCancel(ctx)
	}
	if !s.tx && s.batch != nil {
		var n int64
		err := s.InTx(ctx, func(tx *Store) error {
			var err error
			n, err = tx.exec(ctx, q, args...)
			return err
		})
		return n, err
	}
	if !s.tx && s.pipe != nil {
		return s.pipe.exec(ctx, s.d.rebind(q), args)
	}
	res, err := s.target(ctx, q, false).ExecContext(ctx, s.d.rebind(q), args...)
	if err != nil {
		return 0, contentError(err)
	}
	s.counted(false)
	return res.RowsAffected()
}

// query runs a query; outside a transaction, a SELECT goes to the readers.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if s.shared {
		ctx = context.WithoutCancel(ctx)
	}
	read := isRead(q)
	rows, err := s.target(ctx, q, read).QueryContext(ctx, s.d.rebind(q), args...)
	if err == nil {
		s.counted(read)
	}
	return rows, contentError(err)
}

// invalidContent is a statement the engine refused because of the data it
// carried (Postgres SQLSTATE class 22, "data exception": a NUL byte, an
// invalid byte sequence, a value out of range). Retrying cannot help.
type invalidContent struct{ err error }

func (e invalidContent) Error() string        { return "content the store cannot hold: " + e.err.Error() }
func (e invalidContent) Unwrap() error        { return e.err }
func (e invalidContent) Is(target error) bool { return target == ErrInvalidContent }

// Permanent marks the error as one the bus must not retry.
func (invalidContent) Permanent() bool { return true }

// contentError marks err as invalidContent when the engine says the data
// itself was at fault.
func contentError(err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && strings.HasPrefix(pg.Code, "22") {
		return invalidContent{err}
	}
	return err
}

// writeRow runs a write that returns one row and scans the row into dest;
// outside a transaction on Postgres, in a pipeline shared with the writes
// made at the same time.
func (s *Store) writeRow(ctx context.Context, q string, args []any, dest ...any) error {
	if !s.tx && s.pipe != nil {
		return s.pipe.row(ctx, s.d.rebind(q), args, dest...)
	}
	return contentError(s.queryRow(ctx, q, args...).Scan(dest...))
}

// readRow runs a SELECT that returns one row and scans the row into dest;
// outside a transaction on Postgres, in the pipeline with the statements
// made at the same time, and on SQLite through the readers' gate.
func (s *Store) readRow(ctx context.Context, q string, args []any, dest ...any) error {
	if !s.tx && s.pipe != nil {
		return s.pipe.readRow(ctx, s.d.rebind(q), args, dest...)
	}
	if s.gated(q) {
		if err := s.rgate.enter(ctx); err != nil {
			return err
		}
		defer s.rgate.leave()
	}
	return s.queryRow(ctx, q, args...).Scan(dest...)
}

// gated reports whether q is a read on SQLite's readers, which takes its
// place in the readers' gate.
func (s *Store) gated(q string) bool { return !s.tx && s.rgate != nil && isRead(q) }

// rowScanner is what *sql.Rows and pgx's rows have in common.
type rowScanner interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// readRows runs a SELECT and hands its rows to each, which reads them all
// and may be called again from the first row (it must set what it
// gathers, not add to it); outside a transaction on Postgres, in the
// pipeline with the statements made at the same time, and on SQLite
// through the readers' gate.
func (s *Store) readRows(ctx context.Context, q string, args []any, each func(rows rowScanner) error) error {
	if !s.tx && s.pipe != nil {
		return s.pipe.readRows(ctx, s.d.rebind(q), args, each)
	}
	if s.gated(q) {
		if err := s.rgate.enter(ctx); err != nil {
			return err
		}
		defer s.rgate.leave()
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if err := each(rows); err != nil {
		return err
	}
	return rows.Err()
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if s.shared {
		ctx = context.WithoutCancel(ctx)
	}
	read := isRead(q)
	row := s.target(ctx, q, read).QueryRowContext(ctx, s.d.rebind(q), args...)
	s.counted(read)
	return row
}

// target is where statement q runs: the transaction, the readers (a
// SELECT outside a transaction) or the writer; on SQLite a prepared
// statement kept for the next time. Only SQLite keeps statements (pgx
// keeps its own), and its placeholders stay as written, so q is looked up
// as it is.
func (s *Store) target(ctx context.Context, q string, read bool) querier {
	switch {
	case s.tx:
		if st := s.wstmts.lookup(q); st != nil {
			return stmtQuerier{s.txStmts.get(ctx, s.sqlTx, st)}
		}
		return s.q
	case read:
		if st := s.rstmts.get(ctx, q); st != nil {
			return stmtQuerier{st}
		}
		return s.rdb
	default:
		if st := s.wstmts.get(ctx, q); st != nil {
			return stmtQuerier{st}
		}
		return s.db
	}
}

// counted records a write statement (and, outside a transaction, its
// commit).
func (s *Store) counted(read bool) {
	if read || s.stats == nil {
		return
	}
	s.stats.statements.Add(1)
	if !s.tx {
		s.stats.commits.Add(1)
	}
}

// isRead reports whether q only reads.
func isRead(q string) bool {
	q = strings.TrimLeft(q, " \t\r\n(")
	return len(q) >= 6 && strings.EqualFold(q[:6], "SELECT")
}

// notFound maps sql.ErrNoRows to ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// where collects AND-ed conditions and their arguments.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
}

func (w *where) sql() string { return " WHERE " + strings.Join(w.conds, " AND ") }

// limitClause is a LIMIT to append when limit > 0, else nothing.
func limitClause(limit int) string {
	if limit <= 0 {
		return ""
	}
	return limitLiteral(limit)
}

// limitLiteral is " LIMIT n" with n written into the text. SQLite's
// planner reads a bound LIMIT's value (to bound its sorter), which marks
// the statement to be compiled again every time it is bound: a prepared
// statement with LIMIT ? is parsed anew on every run. n is an int, so
// writing it in cannot inject anything; each distinct n is one more
// statement in the cache.
func limitLiteral(n int) string {
	return " LIMIT " + strconv.Itoa(n)
}

// likeEscape escapes s for LIKE ... ESCAPE '\'.
func likeEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

// counterStep is counter's statement: (tenant_id, user_id, name) in, the new
// value out.
const counterStep = `INSERT INTO counters (tenant_id, user_id, name, value) VALUES (?, ?, ?, 1)
	ON CONFLICT (tenant_id, user_id, name) DO UPDATE SET value = counters.value + 1
	RETURNING value`

// counter increments and returns a per-(tenant, user, name) counter inside
// the current transaction. Concurrent callers serialise on the counter row
// (Postgres row lock, SQLite write lock), so values are never handed out
// twice; values burned by a rolled-back transaction are reused, and values
// are never reused after commit.
func (s *Store) counter(ctx context.Context, tenantID, userID, name string) (int64, error) {
	var v int64
	err := s.queryRow(ctx, counterStep, tenantID, userID, name).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("next %s number: %w", name, err)
	}
	return v, nil
}
