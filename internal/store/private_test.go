package store_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// The database holds every tenant's data and the sealed mail tokens: its
// file, log and shared memory are 0600 whatever the umask and the folder's
// mode, and files an older purser left readable are made private on open.
func TestSQLiteFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o022) // the usual umask, which leaves new files 0644
	defer syscall.Umask(old)
	tests := []struct {
		name string
		give map[string]fs.FileMode // files present before Open
	}{
		{name: "new database", give: nil},
		{name: "left readable by an older purser", give: map[string]fs.FileMode{"purser.db": 0o644, "purser.db-wal": 0o644, "purser.db-shm": 0o666}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, mode := range tt.give {
				if err := os.WriteFile(filepath.Join(dir, name), nil, mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
					t.Fatal(err)
				}
			}
			st := storetest.Open(t, "sqlite:"+filepath.Join(dir, "purser.db"))
			// A write, so that the log holds something.
			if _, err := st.AddExpense(context.Background(), store.Expense{TenantID: "t", UserID: "u", Item: "tea", AmountMinor: 200, Currency: "GBP", Date: "2026-11-01"}); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"purser.db", "purser.db-wal", "purser.db-shm"} {
				fi, err := os.Stat(filepath.Join(dir, name))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got := fi.Mode().Perm(); got != 0o600 {
					t.Errorf("%s has mode %04o, want 0600", name, got)
				}
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				fi, err := e.Info()
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm()&0o077 != 0 {
					t.Errorf("%s has mode %04o, readable by others", e.Name(), fi.Mode().Perm())
				}
			}
		})
	}
}
