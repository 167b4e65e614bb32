package bench_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/purser-ai/purser/internal/bench"
)

// On Postgres the bench reads the server's log position, and it moves on
// by at least what a transaction wrote.
func TestWALPositionGrowsWithWrites(t *testing.T) {
	url := os.Getenv("PURSER_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("PURSER_TEST_DATABASE_URL is not set")
	}
	ctx := context.Background()
	w, err := bench.OpenWAL(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	before, err := w.Position(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	table := fmt.Sprintf("bench_wal_%d", time.Now().UnixNano())
	defer conn.Exec(ctx, "DROP TABLE IF EXISTS "+table)
	// 1,000 rows of 1,024 characters that do not compress: about 1 MB.
	for _, q := range []string{"CREATE TABLE " + table + " (s text)",
		"INSERT INTO " + table + " SELECT (SELECT string_agg(md5(random()::text || i || j), '') FROM generate_series(1, 32) j) FROM generate_series(1, 1000) i"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	after, err := w.Position(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before <= 0 || after-before < 1000*1024 {
		t.Fatalf("position %d then %d: grew %d bytes for about 1 MB written", before, after, after-before)
	}
}
