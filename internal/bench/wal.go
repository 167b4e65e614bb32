package bench

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// WAL reads how far a Postgres server's write-ahead log has come, in
// bytes from its start: the difference between two readings is what the
// whole server wrote to its log meanwhile, for every database and client
// on it.
type WAL struct {
	conn *pgx.Conn
}

// OpenWAL connects to the Postgres server of url.
func OpenWAL(ctx context.Context, url string) (*WAL, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("wal: %w", err)
	}
	return &WAL{conn: conn}, nil
}

// Position is the current end of the log, in bytes.
func (w *WAL) Position(ctx context.Context) (int64, error) {
	var n int64
	err := w.conn.QueryRow(ctx, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint").Scan(&n)
	return n, err
}

// Close closes the connection.
func (w *WAL) Close(ctx context.Context) error { return w.conn.Close(ctx) }

// Keep, where the pg_walinspect extension is in this database, makes
// the server keep its log from now on while this connection lasts (a
// temporary replication slot), so that Own can read it: a server
// otherwise recycles its log files after each checkpoint. ok is false
// without the extension.
func (w *WAL) Keep(ctx context.Context) (ok bool, err error) {
	var installed bool
	if err := w.conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_walinspect')").Scan(&installed); err != nil || !installed {
		return false, err
	}
	if _, err := w.conn.Exec(ctx, "SELECT pg_create_physical_replication_slot('purser_bench_' || pg_backend_pid(), true, true)"); err != nil {
		return false, fmt.Errorf("keep the WAL: %w", err)
	}
	return true, nil
}

// Own is what of the log between two positions was this database's: the
// records that change its relations, and the other records (commits) of
// their transactions. It needs the pg_walinspect extension in this
// database, and the log kept since from (Keep). A checkpoint's records,
// and those of other databases on the server, are not counted.
func (w *WAL) Own(ctx context.Context, from, to int64) (n int64, err error) {
	err = w.conn.QueryRow(ctx, `
WITH r AS (
	SELECT xid::text::bigint AS xid, record_length, block_ref
	FROM pg_get_wal_records_info('0/0'::pg_lsn + $1::numeric, '0/0'::pg_lsn + $2::numeric)
), mine AS (
	SELECT DISTINCT xid FROM r
	WHERE xid <> 0 AND block_ref ~ ('rel [0-9]+/' || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/')
)
SELECT coalesce(sum(record_length), 0)::bigint FROM r
WHERE block_ref ~ ('rel [0-9]+/' || (SELECT oid FROM pg_database WHERE datname = current_database()) || '/')
	OR xid IN (SELECT xid FROM mine)`, from, to).Scan(&n)
	return n, err
}
