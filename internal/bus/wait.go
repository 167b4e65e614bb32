package bus

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// errStopped is WaitWhile's answer when stop closed first.
var errStopped = errors.New("stopped while waiting")

// WaitWhile runs step until it succeeds, or its error is not one away
// says is for now, or limit passes (the last error is returned), or ctx
// ends or stop (when not nil) closes. Between tries it logs msg and waits
// 250 ms, doubling up to 4 s: a service started while the database
// restarts, or a router started while the NATS cluster elects a leader
// after losing a node, comes up once they are back instead of exiting.
func WaitWhile(ctx context.Context, stop <-chan struct{}, log *slog.Logger, msg string, limit time.Duration,
	away func(error) bool, step func(context.Context) error) error {
	deadline := time.Now().Add(limit)
	wait := 250 * time.Millisecond
	for {
		err := step(ctx)
		if err == nil || ctx.Err() != nil || !away(err) || time.Now().After(deadline) {
			return err
		}
		log.Warn(msg, "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return err
		case <-stop:
			return errStopped
		case <-time.After(wait):
		}
		wait = min(2*wait, 4*time.Second)
	}
}
