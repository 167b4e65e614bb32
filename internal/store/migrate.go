package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// migrations holds one folder of goose SQL files per engine. The two
// folders must describe the same schema.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// migrate applies pending migrations. On Postgres a session advisory lock
// serialises replicas that start at once (the second waits, polling every
// second for up to five minutes, then finds nothing to do). On SQLite an
// exclusive lock on "<file>.migrate.lock" does the same for processes and
// stores sharing one file.
func migrate(ctx context.Context, db *sql.DB, d dialect, sqlitePath string) error {
	if d.name == dialectSQLite && sqlitePath != "" && !strings.Contains(sqlitePath, ":memory:") {
		unlock, err := lockFile(sqlitePath + ".migrate.lock")
		if err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		defer unlock()
	}
	var opts []goose.ProviderOption
	if d.name == dialectPostgres {
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		if err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := migrationProvider(db, d, opts...)
	if err != nil {
		return err
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s store: %w", d.name, err)
	}
	return nil
}

// migrationProvider applies d's migrations to db.
func migrationProvider(db *sql.DB, d dialect, opts ...goose.ProviderOption) (*goose.Provider, error) {
	fsys, err := fs.Sub(migrations, "migrations/"+d.name)
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", d.name, err)
	}
	gd := goose.DialectSQLite3
	if d.name == dialectPostgres {
		gd = goose.DialectPostgres
	}
	p, err := goose.NewProvider(gd, db, fsys, append(opts, goose.WithDisableGlobalRegistry(true))...)
	if err != nil {
		return nil, fmt.Errorf("migrations for %s: %w", d.name, err)
	}
	return p, nil
}

// lockFile takes an exclusive advisory lock on path, waiting for it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
