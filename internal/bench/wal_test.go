package bench_test

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/purser-ai/purser/internal/bench"
)

// writeMB writes about 1 MB that does not compress into a new table on
// conn.
func writeMB(t *testing.T, ctx context.Context, conn *pgx.Conn) {
	t.Helper()
	table := fmt.Sprintf("bench_wal_%d", time.Now().UnixNano())
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP TABLE IF EXISTS "+table) })
	for _, q := range []string{"CREATE TABLE " + table + " (s text)",
		"INSERT INTO " + table + " SELECT (SELECT string_agg(md5(random()::text || i || j), '') FROM generate_series(1, 32) j) FROM generate_series(1, 1000) i"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
}

// On Postgres the bench reads the server's log position, which moves on
// by at least what a transaction wrote; with pg_walinspect in the
// database it also says what of the log was that database's, leaving out
// what was written to another database meanwhile.
func TestWALCountsWhatADatabaseWrote(t *testing.T) {
	dsn := os.Getenv("PURSER_TEST_DATABASE_URL")
	if dsn == "" {
		t.Skip("PURSER_TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	other, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	db := fmt.Sprintf("bench_wal_%d", time.Now().UnixNano())
	if _, err := other.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _ = other.Exec(context.Background(), "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)") }()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	w, err := bench.OpenWAL(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	mine, err := pgx.Connect(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Close(ctx)

	// Without the extension, only the server's whole log.
	before, err := w.Position(ctx)
	if err != nil {
		t.Fatal(err)
	}
	writeMB(t, ctx, mine)
	after, err := w.Position(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before <= 0 || after-before < 1000*1024 {
		t.Fatalf("position %d then %d: grew %d bytes for about 1 MB written", before, after, after-before)
	}
	if ok, err := w.Keep(ctx); ok || err != nil {
		t.Fatalf("Keep without pg_walinspect: ok %v, err %v", ok, err)
	}

	if _, err := mine.Exec(ctx, "CREATE EXTENSION pg_walinspect"); err != nil {
		t.Skipf("no pg_walinspect: %v", err)
	}
	if ok, err := w.Keep(ctx); !ok || err != nil {
		t.Fatalf("Keep: ok %v, err %v", ok, err)
	}
	before, _ = w.Position(ctx)
	writeMB(t, ctx, mine)
	writeMB(t, ctx, other) // another database's: not counted
	// A checkpoint would let the server recycle the log Own reads, but
	// for Keep.
	if _, err := other.Exec(ctx, "CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	after, _ = w.Position(ctx)
	own, err := w.Own(ctx, before, after)
	if err != nil {
		t.Fatalf("Own: %v", err)
	}
	if own < 1000*1024 || own > after-before-1000*1024 {
		t.Fatalf("own %d bytes of %d in the log: want this database's MB and not the other's", own, after-before)
	}
}
