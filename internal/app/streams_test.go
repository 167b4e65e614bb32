package app

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/syncbuf"
)

// runNotifier runs `purser notifier` until it is ready, and returns a
// stop that waits for it to end.
func runNotifier(t *testing.T, cfg config.Config, log *slog.Logger) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan string, 1)
	go func() { done <- runService(ctx, cfg, config.ModeNotifier, log, func(addr string) { ready <- addr }) }()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("notifier did not start: %v", err)
	case <-time.After(60 * time.Second):
		cancel()
		t.Fatal("notifier not ready")
	}
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("notifier: %v", err)
		}
	}
}

// The issue's report, replayed: `nats stream edit AGENT --max-bytes=1GB
// --max-age=1d`, then a restart of the notifier. The edit stays; start-up
// says the configuration differs; `purser streams apply` prints the
// difference and only then changes it.
func TestAStreamEditSurvivesARestartOfAService(t *testing.T) {
	t.Parallel()
	srv, nc := natstest.Start(t)
	js, _ := jetstream.New(nc)
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.NATSURL = srv.ClientURL()
	cfg.DatabaseURL = "sqlite:" + filepath.Join(t.TempDir(), "purser.db")
	cfg.HTTPAddr = "127.0.0.1:0"
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	runNotifier(t, cfg, quiet)()
	ctx := context.Background()
	s, err := js.Stream(ctx, bus.StreamAgent)
	if err != nil {
		t.Fatalf("the notifier did not create AGENT: %v", err)
	}
	edit := s.CachedInfo().Config
	edit.MaxBytes, edit.MaxAge = 1<<30, 24*time.Hour
	if _, err := js.UpdateStream(ctx, edit); err != nil {
		t.Fatal(err)
	}

	var logs syncbuf.Buffer // the connection's close is logged from its own goroutine
	runNotifier(t, cfg, slog.New(slog.NewTextHandler(&logs, nil)))()
	s, _ = js.Stream(ctx, bus.StreamAgent)
	if got := s.CachedInfo().Config; got.MaxBytes != 1<<30 || got.MaxAge != 24*time.Hour {
		t.Fatalf("after the restart AGENT holds %s for %s; want the operator's 1GiB for 1d", bus.FormatBytes(got.MaxBytes), bus.FormatAge(got.MaxAge))
	}
	if !strings.Contains(logs.String(), "stream=AGENT setting=max_bytes server=1GiB configured=512MiB") {
		t.Errorf("start-up did not report the difference; logs:\n%s", logs.String())
	}

	var out bytes.Buffer
	if err := StreamsApply(ctx, cfg, &out, true); err != nil {
		t.Fatal(err)
	}
	s, _ = js.Stream(ctx, bus.StreamAgent)
	if s.CachedInfo().Config.MaxBytes != 1<<30 {
		t.Fatal("a dry run changed the stream")
	}
	for _, want := range []string{"AGENT", "max_bytes", "1GiB -> 512MiB", "max_age", "1d -> 7d", "TURNS", "unchanged", "1 stream(s) would change"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := StreamsApply(ctx, cfg, &out, false); err != nil {
		t.Fatal(err)
	}
	s, _ = js.Stream(ctx, bus.StreamAgent)
	if got := s.CachedInfo().Config; got.MaxBytes != 512<<20 || got.MaxAge != 7*24*time.Hour {
		t.Fatalf("after apply AGENT holds %s for %s; want 512MiB for 7d", bus.FormatBytes(got.MaxBytes), bus.FormatAge(got.MaxAge))
	}
	if !strings.Contains(out.String(), "1GiB -> 512MiB") || !strings.Contains(out.String(), "1 stream(s) changed") {
		t.Errorf("apply output:\n%s", out.String())
	}
}
