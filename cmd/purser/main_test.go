package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/purser-ai/purser/internal/app"
)

// TestMain lets the test binary be the toolrunner's import worker, as the
// purser binary is ("purser import-worker"), for the tests that run
// purser up.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == app.ImportWorkerCommand {
		if err := app.ServeImportWorker(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	raceNoExitSleep()
	os.Exit(m.Run())
}

// raceNoExitSleep spares each import worker the race detector's sleep at
// exit. Under -race a Go program sleeps a second before it exits
// (GORACE's atexit_sleep_ms, default 1000), and every file purser up
// reads here is parsed by a worker that is this test binary: a second of
// idle wall time per file. The workers still run under the race
// detector, which reports a race when it sees it and still fails the
// worker (exit status 66); only the pause before exit goes. A GORACE the
// person set keeps its options, and one naming atexit_sleep_ms wins.
func raceNoExitSleep() {
	if err := os.Setenv("GORACE", "atexit_sleep_ms=0 "+os.Getenv("GORACE")); err != nil {
		panic(err)
	}
}
