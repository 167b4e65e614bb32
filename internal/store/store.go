// Package store is purser's system of record: conversations and their
// outbox, proposals, expenses, imported transactions and documents,
// notifications and the client delivery log, the audit log and tool-call
// results.
//
// One implementation over database/sql serves two engines: SQLite
// (modernc.org/sqlite, the embedded default of "purser up") and Postgres
// (pgx, for replicated deployments). Every method that reads or changes a
// row is scoped by tenant: given tenant A it never reads or changes a row of
// tenant B. Times are stored in UTC with microsecond precision; dates are
// YYYY-MM-DD text; money is integer minor units plus an ISO 4217 currency.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"modernc.org/sqlite"               // registers the "sqlite" database/sql driver
)

// ErrNotFound is returned (wrapped) when the row asked for does not exist for
// the given tenant. A row of another tenant is reported the same way, so
// callers cannot learn that it exists.
var ErrNotFound = errors.New("not found")

// ErrConflict is returned (wrapped) when a compare-and-set fails: an
// optimistic-concurrency version mismatch, a status that is no longer the
// expected one, or an id reused with different content.
var ErrConflict = errors.New("conflict")

// ErrInvalidContent is returned (wrapped) when the engine refuses a value
// itself (a NUL byte, an invalid byte sequence): retrying cannot help, and
// the error says it is permanent (a Permanent() bool method).
var ErrInvalidContent = errors.New("invalid content")

// Store is a handle on the system of record. A Store returned by Open is
// safe for concurrent use; the *Store passed to an InTx callback is bound to
// one transaction and must be used from one goroutine, inside the callback
// only.
type Store struct {
	db    *sql.DB // writes; on SQLite one connection, the one writer
	rdb   *sql.DB // reads outside transactions; on SQLite a pool of read-only connections
	q     querier // db, or the transaction of an InTx callback
	sqlTx *sql.Tx // the transaction of an InTx callback
	// txStmts are the writer's prepared statements made for sqlTx, each
	// once a transaction.
	txStmts *txStmts
	tx      bool
	d       dialect
	now     func() time.Time
	path    string // SQLite file
	// wstmts and rstmts keep statements prepared once (SQLite, where
	// parsing SQL again for every statement costs more than running it).
	wstmts, rstmts *stmtCache
	stats          *writeStats
	batch          *batcher      // SQLite's one writer; nil on Postgres
	pipe           *pipe         // Postgres's grouped single statements; nil on SQLite
	ckpt           *checkpointer // SQLite's log copier; nil on Postgres and :memory:
	rgate          *readGate     // SQLite's read connections in turn; nil on Postgres and :memory:
	// shared marks the Store of a transaction shared by several callers:
	// its statements ignore cancellation, since SQLite answers an
	// interrupted write by rolling back the whole transaction.
	shared bool
	// epochs are SQLite's settings epochs (epochs.go); nil on Postgres.
	epochs *settingsEpochs
	// ended runs once the transaction of an InTx callback's Store has
	// ended; nil outside one, and on Postgres (no epochs to move).
	ended *txEnd
}

// Option configures Open.
type Option func(*Store)

// WithClock sets the clock used only when a caller leaves a timestamp zero
// (CreatedAt, UpdatedAt). The default is time.Now.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// Open opens the store named by dsn and applies pending migrations.
//
// dsn is "sqlite:<path>" (or a bare path ending in .db), or a
// "postgres://..." / "postgresql://..." URL. A SQLite path may carry extra
// driver query parameters after '?'; "sqlite::memory:" gives a private
// in-memory database on a single connection. On Postgres, replicas that
// start at once serialise their migrations on an advisory lock. Errors never
// contain the DSN's password. The caller closes the Store.
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	s, err := open(ctx, dsn, opts...)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, s.db, s.d, s.path); err != nil {
		s.closeAll()
		return nil, redact(err, dsn)
	}
	return s, nil
}

// Migrate applies pending migrations to the database named by dsn (see Open)
// and closes it again. It is what "purser migrate" runs; Open does the same
// on its own, so calling Migrate first is never required.
func Migrate(ctx context.Context, dsn string) error {
	s, err := Open(ctx, dsn)
	if err != nil {
		return err
	}
	return s.Close()
}

// maxPostgresConns bounds one store's connections to PostgreSQL.
const maxPostgresConns = 16

func open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	driver, source, d, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	sqliteFile := d.name == dialectSQLite && !strings.Contains(source, ":memory:")
	if sqliteFile {
		// Before the first connection: SQLite gives the log and the
		// shared-memory file it creates the database file's mode.
		path, _, _ := strings.Cut(source, "?")
		if err := privateFiles(path); err != nil {
			return nil, fmt.Errorf("open %s store: %w", d.name, err)
		}
		if err := formatNewFile(ctx, path); err != nil {
			return nil, fmt.Errorf("open %s store: %w", d.name, err)
		}
	}
	wsource := source
	if sqliteFile {
		// The writer's commits only append to the log: the checkpointer
		// copies the log into the file on a connection of its own. Its
		// page cache holds 15,000 pages (about 15 MiB of 1-KiB pages)
		// instead of SQLite's 2 MiB: a turn's rows land on the leaves of
		// many users' index entries, and with 2 MiB at 1,000 users the
		// writer read most of them back from the system's cache (pread
		// and page set-up: 6.3% of purser's CPU in a profile of `purser
		// bench --up`, 3.7% with 64 MiB of 4-KiB pages). No more than
		// that: a commit after a page split walks the cache's whole hash
		// table (SQLite renumbers the split's pages through a page number
		// past the file's end, and the commit then looks for pages past
		// the end in every slot); with 65,536 pages that walk was 6.3% of
		// purser's CPU. The table doubles when the cache holds as many
		// pages as it has slots, so 16,384 pages made it 32,768 slots and
		// the walk 3.0%; 15,000 never fill 16,384 slots, and the walk
		// took 1.6%, with the writer's reads from the file still under 0.2%.
		// (pcache.go now keeps the split from leaving that walk behind.)
		wsource += "&_pragma=wal_autocheckpoint(0)&_pragma=cache_size(15000)"
		// Every commit syncs the log (SQLite's default, set here because
		// purser's VFS gathers the log's writes until that sync).
		wsource += "&_pragma=synchronous(FULL)" + vfsParam()
	}
	db, err := sql.Open(driver, wsource)
	if err != nil {
		return nil, redact(fmt.Errorf("open %s store: %w", d.name, err), dsn)
	}
	rdb := db
	var cdb *sql.DB // SQLite's checkpointer
	switch {
	case d.name == dialectSQLite && !sqliteFile:
		// Every connection to :memory: is a different database.
		db.SetMaxOpenConns(1)
	case sqliteFile:
		// One writer: SQLite takes one write transaction at a time
		// anyway, and writers queued on one connection wait their turn
		// instead of sleeping through busy timeouts. Readers (WAL) never
		// wait for it.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxIdleTime(0)
		if rdb, err = sql.Open(driver, source+"&_pragma=query_only(1)"+readerMmap+vfsParam()); err != nil {
			db.Close()
			return nil, redact(fmt.Errorf("open %s store: %w", d.name, err), dsn)
		}
		rdb.SetMaxOpenConns(sqliteReaders)
		rdb.SetMaxIdleConns(sqliteReaders)
		if cdb, err = sql.Open(driver, source); err != nil {
			db.Close()
			rdb.Close()
			return nil, redact(fmt.Errorf("open %s store: %w", d.name, err), dsn)
		}
		cdb.SetMaxOpenConns(1)
		cdb.SetMaxIdleConns(1)
	default:
		// Postgres: a bounded pool, kept warm. A burst of work queues for
		// a connection instead of opening connections until the server
		// refuses more (its default max_connections is 100, shared by
		// every replica), and busy handlers do not open and close them.
		db.SetMaxOpenConns(maxPostgresConns)
		db.SetMaxIdleConns(maxPostgresConns)
		db.SetConnMaxIdleTime(5 * time.Minute)
	}
	s := &Store{db: db, rdb: rdb, q: db, d: d, now: time.Now, stats: &writeStats{}}
	if d.name == dialectSQLite {
		s.path, _, _ = strings.Cut(source, "?")
		s.wstmts, s.rstmts = newStmtCache(db), newStmtCache(rdb)
		if cdb != nil {
			s.ckpt = newCheckpointer(cdb)
			s.rgate = newReadGate(sqliteReaders)
		}
		s.batch = newBatcher(s)
		s.epochs = newSettingsEpochs()
	} else {
		s.pipe = newPipe(db, s.stats)
	}
	if err := ping(ctx, db); err != nil {
		s.closeAll()
		return nil, redact(fmt.Errorf("connect to %s store: %w", d.name, err), dsn)
	}
	if sqliteFile {
		// Again now that the log exists, whatever mode SQLite gave it.
		if err := privateFiles(s.path); err != nil {
			s.closeAll()
			return nil, fmt.Errorf("open %s store: %w", d.name, err)
		}
	}
	for _, o := range opts {
		o(s)
	}
	return s, nil
}

// ping checks the first connection. A brand-new SQLite file is switched to
// WAL by the first connection, which needs the file to itself: replicas
// starting together on one file see SQLITE_BUSY at once (SQLite skips the
// busy timeout there), so that is waited out, for a bounded time.
func ping(ctx context.Context, db *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := db.PingContext(ctx)
		var serr *sqlite.Error
		if err == nil || !errors.As(err, &serr) || serr.Code()&0xff != sqliteBusy || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// sqliteBusy is SQLITE_BUSY, the primary result code of a locked database.
const sqliteBusy = 5

// readerMmap has SQLite's readers read the database file through a
// memory map instead of a system call and a copy a page. A reader starts
// each read with an empty page cache whenever a commit came since its
// last (at 1,000 bench users, nearly every read), so every page it
// touches is fetched again: those reads were 1.8% of purser's CPU in a
// profile of `purser bench --up`, and 0.8% with the map. Pages still in
// the log are read from it as before. The file only grows (nothing
// vacuums it), so the map never reaches past its end. The writer keeps
// its own page cache, which holds what it writes.
const readerMmap = "&_pragma=mmap_size(1073741824)"

// vfsParam has a connection open its files through purser's VFS (vfs.go):
// the writer's log writes gathered, a reader's map of the file kept from
// one read to the next while its size stays the same.
func vfsParam() string {
	if vfsFailed {
		return ""
	}
	return "&vfs=" + purserVFS
}

// sqliteReaders is how many read-only connections SQLite has (the writer
// is one more).
const sqliteReaders = 4

// sqliteParams are the driver parameters every SQLite connection gets: a
// busy timeout instead of immediate SQLITE_BUSY, WAL so readers never block
// the writer, foreign keys on, and BEGIN IMMEDIATE so a write transaction
// takes the write lock up front instead of failing on upgrade; and
// temporary files in memory: each transaction of a shared commit runs in
// a savepoint, whose statement journal (a copy of every page it changes
// first) otherwise spills to a temporary file past 64 KiB, written with a
// system call a page, only to be deleted at RELEASE. It took about a tenth
// of purser's CPU at 1,000 users (a profile of `purser bench --up`).
var sqliteParams = []string{
	"_pragma=busy_timeout(5000)",
	"_pragma=journal_mode(WAL)",
	"_pragma=foreign_keys(1)",
	"_pragma=temp_store(2)",
	"_txlock=immediate",
}

func parseDSN(dsn string) (driver, source string, d dialect, err error) {
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return "pgx", dsn, postgresDialect, nil
	case strings.HasPrefix(dsn, "sqlite:"), strings.HasSuffix(dsn, ".db"):
		path := strings.TrimPrefix(dsn, "sqlite:")
		path, extra, _ := strings.Cut(path, "?")
		if path == "" {
			return "", "", dialect{}, errors.New("open store: empty sqlite path")
		}
		params := sqliteParams
		if extra != "" {
			params = append(params[:len(params):len(params)], extra)
		}
		return "sqlite", path + "?" + strings.Join(params, "&"), sqliteDialect, nil
	default:
		return "", "", dialect{}, errors.New(`open store: unsupported dsn: want "sqlite:<path>", a path ending in .db, or "postgres://..."`)
	}
}

// Ping checks that the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("ping %s store: %w", s.d.name, err)
	}
	return nil
}

// Close closes the database. Closing the *Store of an InTx callback is a
// no-op: the transaction ends when the callback returns.
func (s *Store) Close() error {
	if s.tx {
		return nil
	}
	return s.closeAll()
}

func (s *Store) closeAll() error {
	if s.batch != nil {
		s.batch.close()
	}
	if s.pipe != nil {
		s.pipe.close()
	}
	s.ckpt.close()
	s.wstmts.close()
	s.rstmts.close()
	err := s.db.Close()
	if s.rdb != s.db {
		err = errors.Join(err, s.rdb.Close())
	}
	return err
}

// SharesCommits tells whether transactions begun at once share one commit
// (SQLite's one writer), so that writes grouped in one transaction cost
// one write of the writer instead of one each. On Postgres a statement
// outside a transaction shares a round trip and a commit with the others
// made at the same time (see pipe), while each statement of a transaction
// is a round trip of its own, and BEGIN and COMMIT add two.
func (s *Store) SharesCommits() bool { return s.batch != nil }

// Dialect names the engine: "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.d.name }

// InTx runs fn in one database transaction and commits if fn returns nil;
// otherwise it rolls back and returns fn's error unchanged (errors.Is works).
// The *Store given to fn has every method of Store, all bound to the
// transaction; it must not be used outside fn or from other goroutines.
// Called on a transaction-bound Store, InTx joins that transaction. On
// SQLite the transaction holds the database's write lock from its start,
// and transactions queued at once share one commit, each in a savepoint of
// its own (fn's statements then run without ctx's cancellation); fn must
// not call InTx on a Store that is not its tx.
func (s *Store) InTx(ctx context.Context, fn func(tx *Store) error) error {
	if s.tx {
		return fn(s)
	}
	if s.batch != nil {
		return s.batch.do(ctx, fn)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer s.wstmts.prepareWanted(ctx) // after commit or rollback: the connection is free again
	child := s.inTx(tx, false)
	defer child.ended.run()
	if err := fn(child); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.stats.commits.Add(1)
	return nil
}

// inTx is s for the statements of tx: an InTx callback's, or, shared,
// one of a batch's transactions on the writer.
func (s *Store) inTx(tx *sql.Tx, shared bool) *Store {
	child := &Store{db: s.db, rdb: s.rdb, q: tx, sqlTx: tx, txStmts: &txStmts{}, tx: true, d: s.d, now: s.now, path: s.path,
		wstmts: s.wstmts, rstmts: s.rstmts, stats: s.stats, shared: shared, epochs: s.epochs}
	if s.epochs != nil { // only the settings epochs wait for a transaction's end
		child.ended = &txEnd{}
	}
	return child
}

// orNow returns t in UTC, or the store's clock when t is zero.
func (s *Store) orNow(t time.Time) time.Time {
	if t.IsZero() {
		t = s.now()
	}
	return normTime(t)
}

// redact keeps a DSN's password out of an error's text; errors.Is and
// errors.As still see the original.
func redact(err error, dsn string) error {
	u, perr := url.Parse(dsn)
	if perr != nil || u.User == nil {
		return err
	}
	pw, ok := u.User.Password()
	if !ok || pw == "" {
		return err
	}
	return &redactedError{err: err, secrets: []string{pw, url.QueryEscape(pw), url.PathEscape(pw)}}
}

type redactedError struct {
	err     error
	secrets []string
}

func (e *redactedError) Error() string {
	msg := e.err.Error()
	for _, s := range e.secrets {
		msg = strings.ReplaceAll(msg, s, "xxxxx")
	}
	return msg
}

func (e *redactedError) Unwrap() error { return e.err }

// sqlitePageSize is the page size of a database file purser creates.
const sqlitePageSize = 1024

// formatNewFile gives a new, empty SQLite file its page size and switches
// it to WAL, on a connection of its own: the driver runs a DSN's pragmas
// in alphabetical order, so journal_mode would fix the size before
// page_size could set it. A file that already holds a database keeps the
// size it has (changing it takes a VACUUM outside WAL).
func formatNewFile(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	if fi.Size() > 0 {
		return nil
	}
	db, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA page_size = %d", sqlitePageSize)); err != nil {
		return err
	}
	_, err = conn.ExecContext(ctx, "PRAGMA journal_mode = WAL")
	var serr *sqlite.Error
	if errors.As(err, &serr) && serr.Code()&0xff == sqliteBusy {
		// Another process is making the file; the store's first
		// connection waits for it (ping).
		return nil
	}
	return err
}
