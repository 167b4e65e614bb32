package bench

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used so far, user and
// system (0 where the system cannot say).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processWritten is how many bytes this process has caused to be written
// to storage so far (Linux's /proc/self/io write_bytes, counted when a page
// is dirtied, less what a truncate cancelled before it was written), and
// false where the system cannot say. With --up that is purser's database
// and JetStream's files, the figure that moved most with how often SQLite's
// log is copied.
func processWritten() (int64, bool) {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0, false
	}
	return parseWritten(string(b))
}

// parseWritten reads write_bytes less cancelled_write_bytes from the text
// of /proc/<pid>/io.
func parseWritten(io string) (int64, bool) {
	var written, cancelled int64
	found := false
	for _, line := range strings.Split(io, "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "write_bytes":
			written, found = n, true
		case "cancelled_write_bytes":
			cancelled = n
		}
	}
	return written - cancelled, found
}
