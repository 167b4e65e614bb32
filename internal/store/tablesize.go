package store

import (
	"context"
	"fmt"
)

// EngineTables are the tables that hold engine state: what purser keeps
// only while exactly-once or delivery needs it, bounded by the pruners and
// the search indexer. Every other table holds what people own (the ledger,
// documents, messages, conversations, settings, the audit log, the search
// index of those) and grows with it.
var EngineTables = []string{"outbox", "tool_calls", "proposals", "search_queue"}

// TableBytes returns the bytes each table holds with its indexes. On
// SQLite they are the bytes in use in the table's and its indexes' pages
// (free space and free pages left out, so a table pruned shrinks); on
// Postgres, pg_total_relation_size: the disk the table takes, which
// space freed by deletes is reused from once vacuumed, rather than given
// back. SQLite's full-text index is reported as its shadow tables.
func (s *Store) TableBytes(ctx context.Context) (map[string]int64, error) {
	q := `SELECT m.tbl_name, SUM(d.pgsize - d.unused) FROM dbstat d JOIN sqlite_master m ON m.name = d.name
		GROUP BY m.tbl_name`
	if s.d.name == dialectPostgres {
		q = `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
			WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace`
	}
	out := map[string]int64{}
	err := s.readRows(ctx, q, nil, func(rows rowScanner) error {
		clear(out)
		for rows.Next() {
			var name string
			var n int64
			if err := rows.Scan(&name, &n); err != nil {
				return err
			}
			out[name] = n
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("table sizes: %w", err)
	}
	return out, nil
}
