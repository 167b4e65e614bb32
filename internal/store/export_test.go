package store

import (
	"context"
	"database/sql"
	"time"
)

// MigrateUpTo brings the database of dsn to schema version and runs
// fill on it there, with "?" placeholders in either dialect: a migration
// test's database as an older purser left it. fill runs in one
// transaction.
func MigrateUpTo(ctx context.Context, dsn string, version int64, fill func(exec func(q string, args ...any) error) error) error {
	driver, source, d, err := parseDSN(dsn)
	if err != nil {
		return err
	}
	db, err := sql.Open(driver, source)
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := migrationProvider(db, d)
	if err != nil {
		return err
	}
	if _, err := p.UpTo(ctx, version); err != nil {
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	err = fill(func(q string, args ...any) error {
		for i, a := range args {
			if t, ok := a.(time.Time); ok {
				args[i] = d.ts(t)
			}
		}
		_, err := tx.ExecContext(ctx, d.rebind(q), args...)
		return err
	})
	if err != nil {
		return err
	}
	return tx.Commit()
}

// PipeQueued is how many statements wait for Postgres's pipeline.
func (s *Store) PipeQueued() int { return len(s.pipe.q.reqs) }

// ExecOutsideTx runs q as a write of its own: on Postgres, through the
// pipeline.
func (s *Store) ExecOutsideTx(ctx context.Context, q string, args ...any) error {
	_, err := s.exec(ctx, q, args...)
	return err
}

// WithoutPipeline makes a Postgres store send every write outside a
// transaction on its own, as it did before the pipeline: the baseline of
// BenchmarkTurnWrites.
func WithoutPipeline() Option {
	return func(s *Store) {
		if s.pipe != nil {
			s.pipe.close()
			s.pipe = nil
		}
	}
}

// HoldConnections takes every connection of the store's pool (Postgres)
// and returns a function that gives them back.
func (s *Store) HoldConnections(ctx context.Context) (func(), error) {
	var held []*sql.Conn
	release := func() {
		for _, c := range held {
			c.Close()
		}
	}
	for range maxPostgresConns {
		c, err := s.db.Conn(ctx)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, c)
	}
	return release, nil
}

// ConnectionWaits is how many times a statement waited for a free
// connection of the store's pool.
func (s *Store) ConnectionWaits() int64 { return s.db.Stats().WaitCount }
