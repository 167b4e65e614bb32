package app

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/purser-ai/purser/internal/bus"
)

// startWaitLimit bounds how long a service waits at start for NATS's
// JetStream or the database to answer; past it the start fails, and the
// error is the last one seen.
const startWaitLimit = 2 * time.Minute

// waitFor runs step until it succeeds, ctx ends, startWaitLimit passes or
// its error says something other than "not reachable yet". A service
// started while the database restarts, or while the NATS cluster elects
// a new leader after losing a node, comes up once they are back, rather
// than exiting at once for its supervisor to start it again; a mistake in
// its settings (a bad password, a bad URL) still fails at once.
func waitFor(ctx context.Context, log *slog.Logger, what string, step func(context.Context) error) error {
	return bus.WaitWhile(ctx, nil, log, "start: waiting for "+what, startWaitLimit, notReachableYet, step)
}

// notReachableYet reports whether err says a server did not answer or
// refused connections for now (down, restarting, electing a leader), as
// opposed to refusing what was asked.
func notReachableYet(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) || bus.JetStreamAway(err) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "57P03", "the database system is", "unexpected EOF",
		"no response from stream", "JetStream system temporarily unavailable", "jetstream not enabled"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
