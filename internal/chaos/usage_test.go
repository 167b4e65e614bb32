package chaos

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The sizing figures come from real processes: a live one's /proc and an
// exited one's rusage both count, per kind, per 1,000 turns.
func TestUsageCountsLiveAndExitedProcesses(t *testing.T) {
	// /proc counts CPU in clock ticks (10 ms): burn until one shows, for
	// at most 5 s of wall time.
	var (
		cpu time.Duration
		rss int64
		err error
	)
	for deadline, sum := time.Now().Add(5*time.Second), 0; cpu <= 0 && time.Now().Before(deadline); {
		for i := range 20_000_000 {
			sum += i
		}
		cpu, rss, err = procUsage(os.Getpid())
		_ = sum
	}
	if err != nil || cpu <= 0 || rss <= 0 {
		t.Fatalf("this process: cpu %v, peak %d KiB, %v", cpu, rss, err)
	}
	cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	u := newUsage()
	u.exited("toolrunner", cmd.ProcessState)
	u.running("ingress", os.Getpid())
	if u.cpu["toolrunner"] <= 0 || u.peak["toolrunner"] <= 0 || u.cpu["ingress"] != cpu && u.cpu["ingress"] < cpu {
		t.Fatalf("usage = %+v %+v", u.cpu, u.peak)
	}
	line := u.Line(500)
	if !strings.Contains(line, "ingress ") || !strings.Contains(line, "toolrunner ") || !strings.Contains(line, "MiB") {
		t.Errorf("line = %q", line)
	}
}
