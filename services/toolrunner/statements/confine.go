package statements

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// confine takes the worker's file and network access away before it
// reads a byte of its input (which comes on stdin, already open):
//
//   - Landlock (github.com/landlock-lsm/go-landlock) with no rule for any
//     path, so no file can be opened, read or written, no TCP port bound or
//     connected, and no signal or abstract socket reaches outside. When
//     tesseract is installed, its program, libraries and language data
//     under /usr, /lib and /etc stay readable, for OCR only.
//   - seccomp refuses socket(2) itself, for the protocols Landlock does not
//     cover (UDP, raw, netlink, UNIX).
//
// On a kernel without Landlock the worker keeps only its rlimits and the
// returned note says so, for the log.
func confine() (note string, err error) {
	var rules []landlock.Rule
	if tess, err := exec.LookPath("tesseract"); err == nil {
		tess, _ = filepath.EvalSymlinks(tess)
		rules = append(rules, landlock.RODirs("/usr", "/lib", "/lib64", "/etc/alternatives", filepath.Dir(tess)).IgnoreIfMissing(),
			landlock.ROFiles("/etc/ld.so.cache").IgnoreIfMissing())
	}
	abi, abiErr := llsys.LandlockGetABIVersion()
	switch {
	case abiErr != nil || abi < 1:
		note = "landlock is not available on this kernel: the statement parser runs under its rlimits and seccomp only"
	default:
		if err := landlock.V6.BestEffort().Restrict(rules...); err != nil {
			return "", fmt.Errorf("landlock: %w", err)
		}
		if abi < 4 {
			note = fmt.Sprintf("landlock ABI %d cannot restrict TCP: the statement parser's network is closed by seccomp only", abi)
		}
	}
	if err := denySockets(); err != nil {
		if note != "" {
			note += "; "
		}
		note += "seccomp unavailable: " + err.Error()
	}
	return note, nil
}

// denySockets installs a seccomp filter on every thread that makes
// socket(2) fail with EACCES.
func denySockets() error {
	var arch uint32
	switch runtime.GOARCH {
	case "amd64":
		arch = 0xC000003E // AUDIT_ARCH_X86_64
	case "arm64":
		arch = 0xC00000B7 // AUDIT_ARCH_AARCH64
	default:
		return fmt.Errorf("no filter for %s", runtime.GOARCH)
	}
	const (
		ldAbs   = 0x20 // BPF_LD | BPF_W | BPF_ABS
		jeqK    = 0x15 // BPF_JMP | BPF_JEQ | BPF_K
		retK    = 0x06 // BPF_RET | BPF_K
		allow   = 0x7fff0000
		errnoRe = 0x00050000
	)
	filter := []unix.SockFilter{
		{Code: ldAbs, K: 4}, // seccomp_data.arch
		{Code: jeqK, Jt: 0, Jf: 3, K: arch},
		{Code: ldAbs, K: 0}, // seccomp_data.nr
		{Code: jeqK, Jt: 0, Jf: 1, K: uint32(unix.SYS_SOCKET)},
		{Code: retK, K: errnoRe | uint32(unix.EACCES)},
		{Code: retK, K: allow},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	const setModeFilter, flagTsync = 1, 1
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, setModeFilter, flagTsync, uintptr(unsafe.Pointer(&prog))); errno != 0 {
		return errno
	}
	runtime.KeepAlive(filter)
	return nil
}
