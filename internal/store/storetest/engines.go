// Package storetest is the one conformance suite every store engine must
// pass, and the helpers that give a test a fresh database of each engine.
//
// Postgres is found through PURSER_TEST_DATABASE_URL (default: the local
// trust-auth server of the CI machine). A test that needs it and cannot
// reach it fails; it is never skipped.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/purser-ai/purser/internal/store"
)

// DefaultPostgresURL is used when PURSER_TEST_DATABASE_URL is unset.
const DefaultPostgresURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Engine opens a fresh, migrated, empty store of one engine.
type Engine struct {
	Name string
	DSN  func(t testing.TB) string
}

// Engines are the engines every store test runs against.
func Engines() []Engine {
	return []Engine{{Name: "sqlite", DSN: SQLiteDSN}, {Name: "postgres", DSN: PostgresDSN}}
}

// OnEach runs fn in a parallel subtest of t for each engine, on a fresh
// store of its own.
func OnEach(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, Open(t, e.DSN(t)))
		})
	}
}

// Open opens the store named by dsn and closes it when the test ends.
func Open(t testing.TB, dsn string, opts ...store.Option) *store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := store.Open(ctx, dsn, opts...)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// SQLiteDSN names a new SQLite file in the test's temporary directory.
func SQLiteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "purser.db")
}

// PostgresDSN creates a database of its own for the test on the server of
// PURSER_TEST_DATABASE_URL and drops it when the test ends.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv("PURSER_TEST_DATABASE_URL")
	if base == "" {
		base = DefaultPostgresURL
	}
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		t.Fatalf("postgres at PURSER_TEST_DATABASE_URL does not answer (%v); start it or point the variable at one", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "purser_test_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("PURSER_TEST_DATABASE_URL: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}
