package main

import (
	"strings"
	"testing"

	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/syncbuf"
)

// runBench runs `purser bench` with args and returns what it printed.
func runBench(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir())
	cfg := config.FromEnv(func(string) string { return "" })
	var out, errOut syncbuf.Buffer
	cmd := benchCmd(&cfg, &out, &errOut)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err = cmd.Execute()
	return out.String(), errOut.String(), err
}

// --up-log sets what the purser started by the bench logs: at info, a
// turn's own lines show, which the default (error) keeps quiet.
func TestBenchUpLogsAtTheLevelAsked(t *testing.T) {
	args := []string{"--up", "--users", "1", "--duration", "500ms", "--pause", "100ms", "--ramp", "0s", "--baseline=false"}
	stdout, stderr, err := runBench(t, append(args, "--up-log", "info")...)
	if err != nil {
		t.Fatalf("bench: %v\n%s\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stderr, "turn started") {
		t.Errorf("--up-log info: no turn's log line in\n%s", stderr)
	}
	_, stderr, err = runBench(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "turn started") {
		t.Errorf("by default the in-process purser logged turns:\n%s", stderr)
	}
	if _, _, err := runBench(t, append(args, "--up-log", "loud")...); err == nil || !strings.Contains(err.Error(), "want debug, info, warn or error") {
		t.Errorf("--up-log loud: err %v, want it refused with the levels", err)
	}
}
