package ingress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The ingress keeps no database: it asks the notifier, by core NATS
// request/reply on bus.NotifierSubject, for catch-up frames and the inbox.

// resumePage is how many frames one catch-up request asks for.
const resumePage = 200

// errNotifierUnavailable is returned when no notifier answered in time.
var errNotifierUnavailable = errors.New("notifier unavailable")

// request asks the notifier and returns its reply. A reply that carries an
// error is returned as *contracts.InboxError; no answer is errNotifierUnavailable.
func (in *Ingress) request(ctx context.Context, op, tenant, user string, req contracts.InboxRequest) (contracts.InboxReply, error) {
	subject, err := bus.NotifierSubject(op, tenant, user)
	if err != nil {
		return contracts.InboxReply{}, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return contracts.InboxReply{}, fmt.Errorf("encode %s request: %w", op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, in.cfg.RequestTimeout)
	defer cancel()
	msg, err := in.nc.RequestWithContext(ctx, subject, body)
	if err != nil {
		in.metrics.notifierRequests.WithLabelValues(op, "unavailable").Inc()
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
			return contracts.InboxReply{}, fmt.Errorf("%s: %w", op, errNotifierUnavailable)
		}
		return contracts.InboxReply{}, fmt.Errorf("%s request: %w", op, err)
	}
	var reply contracts.InboxReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		in.metrics.notifierRequests.WithLabelValues(op, "bad_reply").Inc()
		return contracts.InboxReply{}, fmt.Errorf("decode %s reply: %w", op, err)
	}
	if reply.Error != nil {
		in.metrics.notifierRequests.WithLabelValues(op, reply.Error.Code).Inc()
		return contracts.InboxReply{}, reply.Error
	}
	in.metrics.notifierRequests.WithLabelValues(op, "ok").Inc()
	return reply, nil
}

// resume replays every stored frame after afterSeq, in order, then lets
// the live frames that arrived meanwhile through, minus those replayed.
// It runs on the reader, so the client's next frames wait for it.
func (c *client) resume(ctx context.Context, afterSeq int64) {
	if last, err := c.catchUp(ctx, afterSeq); err != nil {
		c.mu.Lock()
		c.filling = true
		c.mu.Unlock()
		go c.retryCatchUp(last)
	}
}

// retryCatchUp tries a catch-up that failed (the notifier was away) again
// until it succeeds or the socket closes. Live frames stay held meanwhile,
// so nothing overtakes the frames still missing; a hold that outgrows the
// socket's queue closes it, and the client resumes.
func (c *client) retryCatchUp(after int64) {
	defer func() {
		c.mu.Lock()
		c.filling = false
		c.mu.Unlock()
	}()
	wait := 250 * time.Millisecond
	for {
		select {
		case <-c.done:
			return
		case <-time.After(wait):
		}
		c.mu.Lock()
		after = max(after, c.replayed) // a resume meanwhile covered these
		c.mu.Unlock()
		last, err := c.catchUp(c.ctx, after)
		if err == nil {
			return
		}
		after, wait = last, min(2*wait, 4*time.Second)
	}
}

// fill catches the socket up after a gap in the live frames: the missing
// ones come from the store, in order, before the held ones; without the
// notifier, again until it answers.
func (c *client) fill(after int64) {
	defer func() {
		c.mu.Lock()
		c.filling = false
		c.mu.Unlock()
	}()
	c.in.metrics.gapFills.Inc()
	if last, err := c.catchUp(c.ctx, after); err != nil {
		c.retryCatchUp(last)
	}
}

// refill catches the socket up from the last frame it was sent, when live
// frames may have been lost (the NATS connection came back).
func (c *client) refill() {
	c.mu.Lock()
	after, busy := c.delivered, c.filling || c.initial
	if after == 0 || busy {
		c.mu.Unlock()
		return
	}
	c.filling = true
	c.mu.Unlock()
	go c.fill(after)
}

// catchUp replays the stored frames after afterSeq, then releases the held
// live frames, minus those replayed. When the store cannot be read it
// returns how far it got, and the live frames stay held.
func (c *client) catchUp(ctx context.Context, afterSeq int64) (int64, error) {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	c.initial = false // this resume takes over the initial hold, if any
	c.holding = true
	c.mu.Unlock()

	last := afterSeq
	var err error
	replayed := 0
	for {
		var reply contracts.InboxReply
		reply, err = c.in.request(ctx, bus.NotifierResume, c.tenant, c.user, contracts.InboxRequest{AfterSeq: last, Limit: resumePage})
		if err != nil {
			break
		}
		progressed := false
		for _, raw := range reply.Frames {
			f := newOutFrame(raw, "")
			if f.seq <= last {
				continue
			}
			if !c.enqueueWait(f) {
				return last, nil
			}
			last, progressed = f.seq, true
			replayed++
		}
		if !reply.More || !progressed {
			break
		}
	}
	c.mu.Lock()
	c.replayed = max(c.replayed, last)
	c.delivered = max(c.delivered, last)
	c.mu.Unlock()
	c.in.metrics.replayed.Add(float64(replayed))
	if err != nil {
		var nerr *contracts.InboxError
		if !errors.As(err, &nerr) && !errors.Is(err, errNotifierUnavailable) {
			c.in.log.Error("resume", "tenant", c.tenant, "err", err)
		}
		return last, err
	}
	c.release()
	return last, nil
}
