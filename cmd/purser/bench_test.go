package main

import (
	"os"
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

// With the stub model, a run ends with what a turn costs against the
// baseline, the first token against the model's own, and prompt tokens
// at the second message against the last of the growth phase's
// conversations.
func TestBenchPrintsTheCostOfATurn(t *testing.T) {
	stdout, stderr, err := runBench(t, "--up", "--users", "2", "--duration", "1s", "--pause", "200ms", "--ramp", "0s",
		"--model-latency", "20ms", "--growth-users", "3", "--growth-messages", "4")
	if err != nil {
		t.Fatalf("bench: %v\n%s\n%s", err, stdout, stderr)
	}
	wants := []string{
		"purser/baseline", "(target at most 3x)",
		"first token p50: purser", "the model's own",
		"prompt tokens a turn (stub's count, characters/4): message 2 ", "message 4 ", "over 3 conversations",
	}
	if _, err := os.Stat("/proc/self/io"); err == nil {
		wants = append(wants, "KB by this process (target at most 30 KB)")
	}
	for _, want := range wants {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}
