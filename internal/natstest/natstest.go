// Package natstest starts a real nats-server with JetStream for tests: in
// process, on a free loopback port, with its data in the test's temp dir.
package natstest

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/busauth"
	"github.com/purser-ai/purser/internal/natsembed"
)

// Start runs a server for t and returns it with an in-process client
// connection; both are closed when the test ends. It never skips.
func Start(tb testing.TB) (*server.Server, *nats.Conn) {
	tb.Helper()
	s := StartWithUsers(tb, nil)
	nc := Connect(tb, s, "test")
	return s, nc
}

// StartWithUsers runs a server for t that accepts only users (anyone,
// without a password, when users is empty), stopped when the test ends.
func StartWithUsers(tb testing.TB, users []*server.User) *server.Server {
	tb.Helper()
	// Streams reserve their size bounds (about 1.6 GiB by default) when
	// created; a fixed cap keeps tests from depending on the free disk.
	s, err := natsembed.Start(natsembed.Options{StoreDir: tb.TempDir(), Port: -1, Users: users, MaxStore: 64 << 30})
	if err != nil {
		tb.Fatalf("start nats-server: %v", err)
	}
	tb.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// StartWithServiceUsers runs a server for t that knows each service's user
// (busauth's table, as `purser up` and deploy/k8s do), with new
// credentials in the test's temp dir, and returns it with every user's
// password.
func StartWithServiceUsers(tb testing.TB) (*server.Server, map[string]string) {
	tb.Helper()
	creds, err := busauth.LoadOrCreate(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	users, err := busauth.ServerUsers(creds)
	if err != nil {
		tb.Fatal(err)
	}
	return StartWithUsers(tb, users), creds
}

// Connect opens another in-process connection to s, closed at cleanup;
// opts add credentials and the like.
func Connect(tb testing.TB, s *server.Server, name string, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	nc, err := natsembed.Connect(s, name, opts...)
	if err != nil {
		tb.Fatalf("connect to nats-server: %v", err)
	}
	tb.Cleanup(nc.Close)
	return nc
}
