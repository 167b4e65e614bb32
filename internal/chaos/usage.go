package chaos

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// usage adds up the CPU time and the peak memory of every process a run
// started, by kind (ingress, orchestrator, toolrunner, notifier, nats),
// over all its lives: a process that exited (killed, rolled) counts its
// resource usage as the kernel reports it at exit, one still running its
// /proc figures at the end. It is what docs/operations.md sizes a
// deployment from.
type usage struct {
	mu   sync.Mutex
	cpu  map[string]time.Duration
	peak map[string]int64 // KiB, the largest of any one process of the kind
}

func newUsage() *usage { return &usage{cpu: map[string]time.Duration{}, peak: map[string]int64{}} }

// exited counts a process of kind that has been waited for.
func (u *usage) exited(kind string, st *os.ProcessState) {
	if u == nil || st == nil {
		return
	}
	var rss int64
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss // KiB on Linux
	}
	u.add(kind, st.UserTime()+st.SystemTime(), rss)
}

// running counts a process of kind that is still alive, from /proc.
func (u *usage) running(kind string, pid int) {
	if u == nil {
		return
	}
	cpu, rss, err := procUsage(pid)
	if err == nil {
		u.add(kind, cpu, rss)
	}
}

func (u *usage) add(kind string, cpu time.Duration, rss int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.cpu[kind] += cpu
	u.peak[kind] = max(u.peak[kind], rss)
}

// clockTick is Linux's USER_HZ, the unit of /proc/<pid>/stat's times.
const clockTick = 100

// procUsage reads a live process's CPU time (user and system) and its
// peak resident set (VmHWM).
func procUsage(pid int) (time.Duration, int64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its closing parenthesis (field 3, the state, first).
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	cpu := time.Duration(utime+stime) * time.Second / clockTick
	var rss int64
	status, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			rss, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return cpu, rss, nil
}

// Line says each kind's CPU per thousand turns and peak memory.
func (u *usage) Line(turns int) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	kinds := make([]string, 0, len(u.cpu))
	for k := range u.cpu {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		per := time.Duration(0)
		if turns > 0 {
			per = u.cpu[k] * 1000 / time.Duration(turns)
		}
		parts = append(parts, fmt.Sprintf("%s %.1fs (peak %d MiB)", k, per.Seconds(), u.peak[k]>>10))
	}
	return "CPU per 1,000 turns, all replicas of a kind together: " + strings.Join(parts, ", ")
}
