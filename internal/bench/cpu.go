package bench

import (
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// ProcessCPU is the CPU time this process has used so far, user and
// system (0 where the system cannot say).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processWritten is how many bytes this process has caused to be written
// to storage so far (/proc/self/io's write_bytes, counted when a page is
// dirtied, less what a truncate cancelled before it was written), and
// false where the system cannot say. With --up that is purser's database
// and JetStream's files.
func processWritten() (int64, bool) {
	p, err := procfs.Self()
	if err != nil {
		return 0, false
	}
	io, err := p.IO()
	if err != nil {
		return 0, false
	}
	return int64(io.WriteBytes) - io.CancelledWriteBytes, true
}
