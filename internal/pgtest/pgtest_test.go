package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"
)

// startServer starts a server for the test, removed when it ends, and
// gives the test's context (two minutes).
func startServer(t *testing.T) (context.Context, *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	s, err := Start(ctx)
	if errors.Is(err, ErrNoPostgres) {
		t.Skip("PostgreSQL is not installed (initdb under /usr/lib/postgresql/*/bin)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Remove)
	return ctx, s
}

// A row committed before the server is killed is there after it starts
// again, and the same pool reconnects by itself.
func TestKilledServerKeepsCommittedRows(t *testing.T) {
	ctx, s := startServer(t)
	db, err := sql.Open("pgx", s.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE kept (id int PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	for i, restart := range []func(){s.Kill, s.Stop} {
		if _, err := db.ExecContext(ctx, `INSERT INTO kept VALUES ($1)`, i); err != nil {
			t.Fatal(err)
		}
		restart()
		if err := s.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		var n int
		// The pool's connections died with the server: the first query
		// may fail on one of them; a later one gets a new connection.
		deadline := time.Now().Add(30 * time.Second)
		for err = errors.New("not yet"); err != nil && time.Now().Before(deadline); {
			err = db.QueryRowContext(ctx, `SELECT count(*) FROM kept`).Scan(&n)
		}
		if err != nil {
			t.Fatalf("after restart %d: %v", i, err)
		}
		if n != i+1 {
			t.Fatalf("after restart %d the table holds %d rows, want %d", i, n, i+1)
		}
	}
}

// A server whose port another server took between the pick and the bind
// does not mistake the other for itself: it takes another port, and its
// URL reaches its own data folder.
func TestAServerWhosePortWasTakenTakesAnother(t *testing.T) {
	ctx, first := startServer(t)
	pick := pickPort
	picks := 0
	pickPort = func() (int, error) {
		if picks++; picks == 1 {
			return first.port, nil // taken since it was seen free
		}
		return pick()
	}
	defer func() { pickPort = pick }()
	second, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Remove()
	if second.port == first.port || picks < 2 {
		t.Fatalf("the second server kept port %d (picks %d), which the first serves", second.port, picks)
	}
	db, err := sql.Open("pgx", second.URL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !second.ours(ctx, db) {
		t.Fatal("the second server's URL reaches another server's data folder")
	}
}
