package bench

import (
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
