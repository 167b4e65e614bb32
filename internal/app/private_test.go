package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/purser-ai/purser/internal/config"
)

func TestPrivateDir(t *testing.T) {
	tests := []struct {
		name string
		give fs.FileMode // 0: the folder does not exist
		want fs.FileMode // the mode reported as it was
	}{
		{"missing", 0, 0o700},
		{"private already", 0o700, 0o700},
		{"readable by all", 0o755, 0o755},
		{"readable by the group", 0o750, 0o750},
		{"writable by all", 0o777, 0o777},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if tt.give != 0 {
				if err := os.Mkdir(dir, tt.give); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, tt.give); err != nil {
					t.Fatal(err)
				}
			}
			got, err := privateDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("privateDir() was = %04o, want %04o", got, tt.want)
			}
			fi, err := os.Stat(dir)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("folder mode = %04o, want 0700", fi.Mode().Perm())
			}
		})
	}
}

// A data folder made 0755 beforehand (with the folders purser keeps in it)
// is made 0700 by purser up, which says so in its log; the database, its
// log and shared memory, the secret and the NATS passwords are 0600, and
// nothing under the folder, the embedded JetStream store included, is
// readable by others.
func TestUpMakesTheDataFolderPrivate(t *testing.T) {
	// The usual umask, under which new files are 0644 unless made
	// private; put back after Up has stopped.
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := filepath.Join(t.TempDir(), "data")
	for _, d := range []string{dir, filepath.Join(dir, "nats"), filepath.Join(dir, "nats-auth"), filepath.Join(dir, "mailbox")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	startUp(t, func(c *config.Config) { c.DataDir = dir })

	for _, name := range []string{"purser.db", "purser.db-wal", "purser.db-shm", "jwt-secret", "nats-auth/admin"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", name, got)
		}
	}
	for _, name := range []string{".", "nats", "nats-auth", "mailbox"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o700 {
			t.Errorf("folder %s has mode %04o, want 0700", name, got)
		}
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		perm := fi.Mode().Perm()
		switch {
		case perm&0o007 != 0:
			t.Errorf("%s has mode %04o: others may read it", rel, perm)
		case !strings.Contains(rel, string(filepath.Separator)) && !d.IsDir() && perm&0o077 != 0:
			t.Errorf("%s has mode %04o, want 0600", rel, perm)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	w, _ := watches.Load(t)
	lw := w.(*logWatch)
	lw.mu.Lock()
	logs := lw.buf.String()
	lw.mu.Unlock()
	var warned []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, `"level":"WARN"`) && strings.Contains(line, "readable by others; made it private") && strings.Contains(line, `"was":"0755"`) {
			warned = append(warned, line)
		}
	}
	if !strings.Contains(strings.Join(warned, "\n"), `"folder":"`+dir+`"`) {
		t.Errorf("no warning that the data folder %s was readable by others; warnings:\n%s", dir, strings.Join(warned, "\n"))
	}
}
