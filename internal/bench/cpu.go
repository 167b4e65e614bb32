package bench

import (
	"runtime/metrics"
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

// processAllocated is how many bytes this process has allocated on the
// heap so far, and how many garbage collections it has run (read from
// runtime/metrics, which stops nothing, unlike runtime.ReadMemStats).
func processAllocated() (bytes, gcs int64) {
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(samples)
	if samples[0].Value.Kind() == metrics.KindUint64 {
		bytes = int64(samples[0].Value.Uint64())
	}
	if samples[1].Value.Kind() == metrics.KindUint64 {
		gcs = int64(samples[1].Value.Uint64())
	}
	return bytes, gcs
}
