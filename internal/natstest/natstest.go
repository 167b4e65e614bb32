// Package natstest starts a real nats-server with JetStream for tests: in
// process, on a free loopback port, with its data in the test's temp dir.
package natstest

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/natsembed"
)

// Start runs a server for t and returns it with an in-process client
// connection; both are closed when the test ends. It never skips.
func Start(tb testing.TB) (*server.Server, *nats.Conn) {
	tb.Helper()
	s, err := natsembed.Start(natsembed.Options{StoreDir: tb.TempDir(), Port: -1})
	if err != nil {
		tb.Fatalf("start nats-server: %v", err)
	}
	tb.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	nc := Connect(tb, s, "test")
	return s, nc
}

// Connect opens another in-process connection to s, closed at cleanup.
func Connect(tb testing.TB, s *server.Server, name string) *nats.Conn {
	tb.Helper()
	nc, err := natsembed.Connect(s, name)
	if err != nil {
		tb.Fatalf("connect to nats-server: %v", err)
	}
	tb.Cleanup(nc.Close)
	return nc
}
