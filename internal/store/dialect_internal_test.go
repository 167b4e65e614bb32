package store

import "testing"

// A Postgres statement's placeholders are numbered, each query its own
// way however often it is asked (rebind keeps what it rewrote), and
// SQLite's are left as they are.
func TestRebindNumbersEachQuerysPlaceholders(t *testing.T) {
	cases := map[string]string{
		`SELECT a FROM t WHERE b = ? AND c = ?`:          `SELECT a FROM t WHERE b = $1 AND c = $2`,
		`INSERT INTO t (a, b, c) VALUES (?, ?, ?)`:       `INSERT INTO t (a, b, c) VALUES ($1, $2, $3)`,
		`UPDATE t SET a = ? WHERE b = ? AND c IN (?, ?)`: `UPDATE t SET a = $1 WHERE b = $2 AND c IN ($3, $4)`,
	}
	for round := range 3 {
		for q, want := range cases {
			if got := postgresDialect.rebind(q); got != want {
				t.Fatalf("round %d: rebind(%q) = %q, want %q", round, q, got, want)
			}
			if got := sqliteDialect.rebind(q); got != q {
				t.Fatalf("SQLite: rebind(%q) = %q, want it unchanged", q, got)
			}
		}
	}
}
