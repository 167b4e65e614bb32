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
