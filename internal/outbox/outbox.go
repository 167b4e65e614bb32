// Package outbox publishes messages that were stored together with the
// state change that produced them. A message is written first (in the same
// transaction as the change), published with its stored id as Nats-Msg-Id,
// and only then marked published; a crash in between republishes it, and
// JetStream's duplicate window drops the copy.
package outbox

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/purser-ai/purser/internal/store"
)

// Store holds the outbox.
type Store interface {
	PendingOutbox(ctx context.Context, limit int) ([]store.OutboxMessage, error)
	MarkPublished(ctx context.Context, ids []string, at time.Time) error
}

// Relay publishes outbox messages.
type Relay struct {
	store Store
	pub   message.Publisher
	log   *slog.Logger
	now   func() time.Time
}

// NewRelay builds a relay; pub must wait for the stream's ack.
func NewRelay(st Store, pub message.Publisher, log *slog.Logger, now func() time.Time) *Relay {
	return &Relay{store: st, pub: pub, log: log, now: now}
}

// Publish sends msgs in order and marks them published. It stops at the
// first failure; what was not sent stays pending for Run to retry.
func (r *Relay) Publish(ctx context.Context, msgs []store.OutboxMessage) error {
	done := make([]string, 0, len(msgs))
	var err error
	for _, m := range msgs {
		wm := message.NewMessage(m.ID, m.Payload)
		for k, v := range m.Headers {
			wm.Metadata.Set(k, v)
		}
		wm.SetContext(ctx)
		if err = r.pub.Publish(m.Subject, wm); err != nil {
			err = fmt.Errorf("publish %s: %w", m.ID, err)
			break
		}
		done = append(done, m.ID)
	}
	if len(done) > 0 {
		if merr := r.store.MarkPublished(ctx, done, r.now()); merr != nil && err == nil {
			err = fmt.Errorf("mark published: %w", merr)
		}
	}
	return err
}

// Straggler is how old a pending message must be before Run publishes it:
// younger ones are still being published by the handler that stored them,
// and publishing them too would only make duplicates for JetStream to drop.
const Straggler = 2 * time.Second

// Run republishes pending messages every interval until ctx ends. It picks
// up what a crashed or failed handler stored but never published.
func (r *Relay) Run(ctx context.Context, interval time.Duration) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := r.flush(ctx, r.now().Add(-Straggler)); err != nil && ctx.Err() == nil {
			r.log.Warn("outbox relay", "err", err)
		}
	}
}

// Flush publishes every pending message once, oldest first.
func (r *Relay) Flush(ctx context.Context) error { return r.flush(ctx, time.Time{}) }

// flush publishes pending messages in order, stopping at the first one
// created after cutoff (none when cutoff is zero).
func (r *Relay) flush(ctx context.Context, cutoff time.Time) error {
	for {
		pending, err := r.store.PendingOutbox(ctx, 100)
		if err != nil {
			return fmt.Errorf("load pending: %w", err)
		}
		n := len(pending)
		if !cutoff.IsZero() {
			for i, m := range pending {
				if m.CreatedAt.After(cutoff) {
					pending = pending[:i]
					break
				}
			}
		}
		if len(pending) == 0 {
			return nil
		}
		if err := r.Publish(ctx, pending); err != nil {
			return err
		}
		if len(pending) < 100 || n != len(pending) {
			return nil
		}
	}
}
