// Package raceexit is for test binaries that run themselves again as
// worker processes (statement and document parsers, the sandbox): under
// -race a Go program sleeps GORACE's atexit_sleep_ms (a second by
// default) before it exits, so each file such a test parses cost a second
// of idle wall time, more than half of some packages' test time.
package raceexit

import "os"

// NoSleep sets GORACE for the worker processes this test binary starts
// so that they exit without that pause. The workers still run under the
// race detector, which reports a race when it sees it and fails the worker
// (exit status 66); only the pause goes. A GORACE the person set keeps its
// options, and one naming atexit_sleep_ms wins over this. Call it from
// TestMain, before any worker starts.
func NoSleep() {
	if err := os.Setenv("GORACE", "atexit_sleep_ms=0 "+os.Getenv("GORACE")); err != nil {
		panic(err)
	}
}
