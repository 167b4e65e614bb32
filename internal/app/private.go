package app

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/purser-ai/purser/internal/config"
)

// privateDirMode is the mode of the data folder and of the folders purser
// keeps in it: the database, the signing secret and the NATS passwords
// are nobody else's business.
const privateDirMode fs.FileMode = 0o700

// privateData creates the data folder and the folders purser keeps secrets
// in (the NATS passwords, the local mailbox when it lies in the data
// folder) as 0700, and makes them 0700 when they already exist with
// another mode, whatever the umask. A folder that let others in is
// reported with a warning, as is one that cannot be made private; only a
// folder that cannot be created is an error. The files in them are made
// private where they are written (the store, auth, busauth).
func privateData(cfg config.Config, log *slog.Logger) error {
	dirs := []string{cfg.DataDir, natsAuthDir(cfg)}
	if mb := cfg.MailboxPath(); filepath.Clean(mb) == filepath.Join(cfg.DataDir, "mailbox") {
		dirs = append(dirs, mb)
	}
	for i, dir := range dirs {
		was, err := privateDir(dir)
		var open *openFolderError
		switch {
		case errors.As(err, &open):
			log.Warn("a data folder is readable by others and could not be made private; make it 0700", "folder", dir, "mode", modeText(open.mode), "err", open.err)
		case err != nil && i == 0:
			return fmt.Errorf("PURSER_DATA_DIR: %w", err)
		case err != nil:
			return err
		case was&0o077 != 0:
			log.Warn("a data folder was readable by others; made it private (0700)", "folder", dir, "was", modeText(was))
		}
	}
	return nil
}

// privateDir creates dir (and its parents) as 0700 when missing and makes
// it 0700 when it is not. It returns the mode dir had before (0700 for a
// new one). An *openFolderError says dir exists but its mode could not be
// changed.
func privateDir(dir string) (fs.FileMode, error) {
	if err := os.MkdirAll(dir, privateDirMode); err != nil {
		return 0, err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return 0, err
	}
	was := fi.Mode().Perm()
	if was == privateDirMode {
		return was, nil
	}
	if err := os.Chmod(dir, privateDirMode); err != nil {
		if was&0o077 == 0 {
			return was, nil // narrower than 0700 already lets nobody else in
		}
		return was, &openFolderError{mode: was, err: err}
	}
	return was, nil
}

// openFolderError is a folder that others can read and whose mode purser
// could not change (another owner, a read-only mount).
type openFolderError struct {
	mode fs.FileMode
	err  error
}

func (e *openFolderError) Error() string {
	return fmt.Sprintf("folder of mode %s cannot be made private: %v", modeText(e.mode), e.err)
}

func (e *openFolderError) Unwrap() error { return e.err }

func modeText(m fs.FileMode) string { return fmt.Sprintf("%04o", m.Perm()) }
