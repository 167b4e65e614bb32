package app

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/syncbuf"
)

// A service's lost NATS connection is logged (warn), with the connection's
// name, so an operator sees the bus go away in the logs.
func TestNATSConnectionChangesAreLogged(t *testing.T) {
	t.Parallel()
	srv, _ := natstest.Start(t)
	var out syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	nc, err := nats.Connect(srv.ClientURL(), append(connectionLogs(log), nats.Name("purser-test"), nats.MaxReconnects(-1))...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	srv.Shutdown()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), "nats disconnected") {
		if time.Now().After(deadline) {
			t.Fatalf("no disconnect logged; logs: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "connection=purser-test") || !strings.Contains(out.String(), "level=WARN") {
		t.Errorf("disconnect line lacks the connection's name or level: %s", out.String())
	}
}
