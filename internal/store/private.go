package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// privateMode is the mode of every file of a SQLite store: they hold every
// tenant's data and the sealed mail tokens.
const privateMode fs.FileMode = 0o600

// privateFiles makes the SQLite database at path and the files SQLite
// keeps beside it readable and writable by their owner only (0600),
// whatever the umask and the folder's mode, creating the database file
// (empty, which SQLite takes for a new database) when it does not exist.
// SQLite creates its log and shared-memory files with the database file's
// mode, so calling this before the first connection covers them too;
// calling it again after fixes files an older purser left open. The folder
// is the caller's: a store does not know who else keeps files in it.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, privateMode)
	if err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("database file: %w", err)
	}
	if err := os.Chmod(path, privateMode); err != nil {
		return fmt.Errorf("make database file private: %w", err)
	}
	// SQLite's log, shared memory and rollback journal, and the lock
	// migrations take.
	for _, suffix := range []string{"-wal", "-shm", "-journal", ".migrate.lock"} {
		err := os.Chmod(path+suffix, privateMode)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("make database file private: %w", err)
		}
	}
	return nil
}
