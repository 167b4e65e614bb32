package bench

import (
	"os"
	"testing"
)

// On Linux the bench reads what this process wrote, and it grows when the
// process writes and syncs a file.
func TestProcessWrittenCountsAFileWritten(t *testing.T) {
	before, ok := processWritten()
	if !ok {
		if _, err := os.Stat("/proc/self/io"); err == nil {
			t.Fatal("/proc/self/io is there but gave no figure")
		}
		t.Skip("this system has no /proc/self/io")
	}
	f, err := os.Create(t.TempDir() + "/w")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	after, _ := processWritten()
	if after-before < 1<<20 {
		t.Fatalf("written grew by %d bytes for a file of 1 MiB", after-before)
	}
}
