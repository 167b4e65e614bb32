package app

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/pgtest"
	"github.com/purser-ai/purser/internal/syncbuf"
)

// A service started while its database is down (restarting, say) waits
// for it and comes up once it is back, saying so in its log, instead of
// exiting; a database that refuses what it is asked (no such database)
// still fails the start at once.
func TestAServiceStartedWhileTheDatabaseIsDownWaitsForIt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg := pgtest.ForTest(t, ctx, "purser")
	srv, _ := natstest.Start(t)
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.NATSURL = srv.ClientURL()
	cfg.HTTPAddr = "127.0.0.1:0"

	// No such database: refused, not waited for.
	cfg.DatabaseURL = pg.URL("nosuch")
	if err := runService(ctx, cfg, config.ModeToolrunner, slog.New(slog.NewTextHandler(io.Discard, nil)), nil); err == nil {
		t.Fatal("a service whose database does not exist started")
	}

	cfg.DatabaseURL = pg.URL("purser")
	pg.Stop()
	var logs syncbuf.Buffer
	sctx, stop := context.WithCancel(ctx)
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- runService(sctx, cfg, config.ModeToolrunner, slog.New(slog.NewTextHandler(&logs, nil)), func(string) { close(ready) })
	}()
	waitLog := time.Now().Add(time.Minute)
	for !containsLog(&logs, "start: waiting for the database") {
		select {
		case err := <-done:
			t.Fatalf("the service exited while the database was down: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(waitLog) {
			t.Fatalf("the service does not say it waits for the database; logs:\n%s", logs.String())
		}
	}
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the service exited instead of coming up: %v", err)
	case <-ctx.Done():
		t.Fatal("the service did not come up once the database was back")
	}
	stop()
	if err := <-done; err != nil {
		t.Errorf("the service stopped with %v", err)
	}
}

func containsLog(b *syncbuf.Buffer, s string) bool { return strings.Contains(b.String(), s) }
