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
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/purser-ai/purser/internal/store"
)

// Store holds the outbox.
type Store interface {
	PendingOutbox(ctx context.Context, limit int) ([]store.OutboxMessage, error)
	MarkPublished(ctx context.Context, ids []string, at time.Time) error
	PruneOutbox(ctx context.Context, cutoff time.Time) (int64, error)
}

// Relay publishes outbox messages. While Run runs, the marks of what
// Publish sent are written in batches, one statement for many handlers'
// messages, instead of one transaction per handler: a mark lost to a
// crash only makes Run publish the message again, and JetStream drops the
// copy by its id.
type Relay struct {
	store Store
	pub   message.Publisher
	log   *slog.Logger
	now   func() time.Time

	// Retention is how long a published message is kept before Prune
	// deletes it, to be looked at. A handler that stores the same message
	// again while the first waits keeps the first; once published, the
	// copy goes out under the same id, and JetStream's duplicate window
	// (2 minutes), then the consumers' own idempotency, drop it. Set
	// before Run.
	Retention time.Duration

	mu      sync.Mutex
	running bool     // Run batches the marks
	marks   []string // published, not yet marked
	full    chan struct{}
}

// DefaultRetention is how long a published message is kept unless
// configured (PURSER_OUTBOX_RETENTION): five duplicate windows.
const DefaultRetention = 10 * time.Minute

// markBatch is how many marks make Run write them at once rather than at
// its next mark tick.
const markBatch = 256

// MarkInterval is how long a mark may wait for others to share its write.
const MarkInterval = 50 * time.Millisecond

// NewRelay builds a relay; pub must wait for the stream's ack.
func NewRelay(st Store, pub message.Publisher, log *slog.Logger, now func() time.Time) *Relay {
	return &Relay{store: st, pub: pub, log: log, now: now, full: make(chan struct{}, 1),
		Retention: DefaultRetention}
}

// Publish sends msgs in order and marks them published. It stops at the
// first failure; what was not sent stays pending for Run to retry.
func (r *Relay) Publish(ctx context.Context, msgs []store.OutboxMessage) error {
	done := make([]string, 0, len(msgs))
	var err error
	for _, m := range msgs {
		wm := message.NewMessage(m.ID, m.Payload)
		wm.Metadata = make(message.Metadata, len(m.Headers)) // never grown while set
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
	if len(done) > 0 && !r.queueMarks(done) {
		if merr := r.store.MarkPublished(ctx, done, r.now()); merr != nil && err == nil {
			err = fmt.Errorf("mark published: %w", merr)
		}
	}
	return err
}

// Batching reports whether Run is running, so that Publish leaves its
// marks to it.
func (r *Relay) Batching() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.running
}

// queueMarks leaves ids for Run to mark; false when Run is not running.
func (r *Relay) queueMarks(ids []string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.running {
		return false
	}
	r.marks = append(r.marks, ids...)
	if len(r.marks) >= markBatch {
		select {
		case r.full <- struct{}{}:
		default:
		}
	}
	return true
}

// writeMarks marks what waits; on failure the ids wait for the next try.
func (r *Relay) writeMarks(ctx context.Context) error {
	r.mu.Lock()
	ids := r.marks
	r.marks = nil
	r.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	if err := r.store.MarkPublished(ctx, ids, r.now()); err != nil {
		r.mu.Lock()
		r.marks = append(ids, r.marks...)
		r.mu.Unlock()
		return fmt.Errorf("mark published: %w", err)
	}
	return nil
}

// Straggler is how old a pending message must be before Run publishes it:
// younger ones are still being published by the handler that stored them,
// and publishing them too would only make duplicates for JetStream to drop.
const Straggler = 2 * time.Second

// Run republishes pending messages every interval until ctx ends. It picks
// up what a crashed or failed handler stored but never published.
// Meanwhile it writes the marks of what Publish sent, in batches.
func (r *Relay) Run(ctx context.Context, interval time.Duration) error {
	r.mu.Lock()
	r.running = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.running = false
		r.mu.Unlock()
		// What waits is written before Run returns, so nothing published
		// is left unmarked by a clean shutdown.
		if err := r.writeMarks(context.WithoutCancel(ctx)); err != nil {
			r.log.Warn("outbox relay", "err", err)
		}
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	m := time.NewTicker(MarkInterval)
	defer m.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-m.C:
		case <-r.full:
		case <-t.C:
			if err := r.writeMarks(ctx); err != nil && ctx.Err() == nil {
				r.log.Warn("outbox relay", "err", err)
			}
			if err := r.flush(ctx, r.now().Add(-Straggler)); err != nil && ctx.Err() == nil {
				r.log.Warn("outbox relay", "err", err)
			}
			continue
		}
		if err := r.writeMarks(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("outbox relay", "err", err)
		}
	}
}

// Prune deletes what was published longer than Retention before now
// and returns how many: published messages would otherwise stay forever,
// two or three for every turn. The orchestrator's pruner calls it on its
// schedule, beside Run, so that a long backlog (the first prune after an
// upgrade) holds up no marks and no stragglers.
func (r *Relay) Prune(ctx context.Context, now time.Time) (int64, error) {
	return r.store.PruneOutbox(ctx, now.Add(-r.Retention))
}

// Flush publishes every pending message once, oldest first.
func (r *Relay) Flush(ctx context.Context) error {
	if err := r.writeMarks(ctx); err != nil {
		return err
	}
	return r.flush(ctx, time.Time{})
}

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
		// While Run batches, Publish leaves its marks to Run, which waits
		// for this flush: mark the page now, or the next read finds the
		// same hundred messages pending and publishes them again, for
		// good (a backlog of stragglers stalled every mark that way).
		if err := r.writeMarks(ctx); err != nil {
			return err
		}
		if len(pending) < 100 || n != len(pending) {
			return nil
		}
	}
}
