package ingress

import (
	"context"
	"errors"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// A socket's frames reach its client in seq order, each once: live frames
// from the user's deliver subject, replays of stored frames (a resume, a
// gap, a NATS reconnect) and the socket's own replies share one queue.
// This file holds all of it: sequencer, the pure core that decides, and the
// client's methods that carry its decisions out (requests to the notifier,
// the queue, goroutines).

// phase says where a socket's live frames go.
type phase uint8

const (
	// phaseLive: live frames are queued as they come.
	phaseLive phase = iota
	// phaseInitial: since the upgrade, live frames are held while the
	// client may still send resume as its first frame.
	phaseInitial
	// phaseHeld: live frames are held while a catch-up replays stored
	// frames or the held ones are released.
	phaseHeld
)

// action is what to do with one live frame.
type action uint8

const (
	// actDrop: a resume replayed it already.
	actDrop action = iota
	// actSend: queue it now.
	actSend
	// actHold: it waits among the held frames.
	actHold
	// actFill: a frame went missing before it; it waits, and the socket
	// catches up from the store first.
	actFill
	// actOverflow: the held frames outgrew their bound; the socket closes
	// and its client resumes.
	actOverflow
)

// sequencer is the ordering state of one socket and the rules over it. It
// does no I/O and takes no lock: its owner calls it under its own mutex
// and carries out what it returns.
type sequencer struct {
	phase phase
	// filling is set while a catch-up runs in the background (a gap fill,
	// a refill, a retry of a resume that failed): no second one starts
	// for a gap or a reconnect meanwhile.
	filling bool
	// held are live frames waiting, in arrival order; at most maxHeld.
	held    []*outFrame
	maxHeld int
	// replayed is the highest seq a catch-up covered: live frames at or
	// below it reached the client already (or it said it had them).
	replayed int64
	// delivered is the highest seq queued to the socket (or covered by a
	// catch-up); 0 until the first. A live frame past delivered+1 means
	// one went missing on its way here (published out of order by a
	// notifier that crashed between storing and publishing, or lost in a
	// NATS reconnect).
	delivered int64
}

// newSequencer starts a socket's ordering: with hold, live frames wait
// until a resume or the end of the initial hold.
func newSequencer(hold bool, maxHeld int) sequencer {
	s := sequencer{phase: phaseLive, maxHeld: maxHeld}
	if hold {
		s.phase = phaseInitial
	}
	return s
}

// live decides what happens to live frame f. For actFill, after is the
// seq to catch up from.
func (s *sequencer) live(f *outFrame) (act action, after int64) {
	if s.covered(f) {
		return actDrop, 0
	}
	if s.phase == phaseLive {
		if f.seq > 0 && s.delivered > 0 && f.seq > s.delivered+1 && !s.filling {
			s.phase, s.filling = phaseHeld, true
			s.held = append(s.held, f)
			return actFill, s.delivered
		}
		s.delivered = max(s.delivered, f.seq)
		return actSend, 0
	}
	if len(s.held) >= s.maxHeld {
		return actOverflow, 0
	}
	s.held = append(s.held, f)
	return actHold, 0
}

// covered reports whether a catch-up sent f already. A frame sent again on
// purpose (the outcome of a repeated turn) never is.
func (s *sequencer) covered(f *outFrame) bool {
	return f.seq > 0 && f.seq <= s.replayed && !f.again
}

// initialHold reports whether the hold since the upgrade is still on.
func (s *sequencer) initialHold() bool { return s.phase == phaseInitial }

// endInitial ends the hold since the upgrade; true means it was on and the
// held frames are now to be released.
func (s *sequencer) endInitial() bool {
	if s.phase != phaseInitial {
		return false
	}
	s.phase = phaseHeld
	return true
}

// startCatchUp holds live frames while stored ones are replayed; it takes
// over the initial hold, if any.
func (s *sequencer) startCatchUp() { s.phase = phaseHeld }

// caughtUp records that stored frames up to last were queued.
func (s *sequencer) caughtUp(last int64) {
	s.replayed = max(s.replayed, last)
	s.delivered = max(s.delivered, last)
}

// release takes the held frames still to be sent, in order, and counts
// them as queued. It returns nil, and ends the hold, once none is left;
// frames held while a batch is queued come in the next one.
func (s *sequencer) release() []*outFrame {
	for len(s.held) > 0 {
		batch := s.held
		s.held = nil
		var out []*outFrame
		for _, f := range batch {
			if s.covered(f) {
				continue
			}
			out = append(out, f)
			s.delivered = max(s.delivered, f.seq)
		}
		if len(out) > 0 {
			return out
		}
	}
	s.phase = phaseLive
	return nil
}

// refill decides whether the socket catches up after live frames may have
// been lost (the NATS connection came back): not before its first frame,
// during the initial hold, or while a catch-up runs in the background.
func (s *sequencer) refill() (after int64, ok bool) {
	if s.delivered == 0 || s.filling || s.phase == phaseInitial {
		return 0, false
	}
	s.filling = true
	return s.delivered, true
}

// retrying records that a failed resume goes on in the background.
func (s *sequencer) retrying() { s.filling = true }

// retryFrom is where a retried catch-up starts: after, or later if a
// resume meanwhile covered more.
func (s *sequencer) retryFrom(after int64) int64 { return max(after, s.replayed) }

// fillDone records that the background catch-up ended.
func (s *sequencer) fillDone() { s.filling = false }

// Retries of a catch-up wait firstRetry, then twice as long each time, up
// to lastRetry.
const (
	firstRetry = 250 * time.Millisecond
	lastRetry  = 4 * time.Second
)

// nextRetry is the wait after one of wait.
func nextRetry(wait time.Duration) time.Duration { return min(2*wait, lastRetry) }

// resumePage is how many frames one catch-up request asks for.
const resumePage = 200

// deliver takes a live frame from the user's deliver subject: dropped if a
// resume replayed it, held while a hold lasts, queued otherwise; a gap
// before it is filled from the store first.
func (c *client) deliver(f *outFrame) {
	c.mu.Lock()
	act, after := c.order.live(f)
	c.mu.Unlock()
	switch act {
	case actSend:
		c.enqueue(f)
	case actFill:
		go c.fill(after)
	case actOverflow:
		c.overflow()
	}
}

// endInitialHold releases the frames held since the upgrade, once. It is
// cheap once the hold has ended, so every client frame may call it.
func (c *client) endInitialHold() {
	c.mu.Lock()
	on := c.order.initialHold()
	c.mu.Unlock()
	if !on {
		return
	}
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	ended := c.order.endInitial()
	c.mu.Unlock()
	if ended {
		c.release()
	}
}

// resume replays every stored frame after afterSeq, in order, then lets
// the live frames that arrived meanwhile through, minus those replayed.
// It runs on the reader, so the client's next frames wait for it.
func (c *client) resume(ctx context.Context, afterSeq int64) {
	if last, err := c.catchUp(ctx, afterSeq); err != nil {
		c.mu.Lock()
		c.order.retrying()
		c.mu.Unlock()
		go c.retryCatchUp(last)
	}
}

// retryCatchUp tries a catch-up that failed (the notifier was away) again
// until it succeeds or the socket closes. Live frames stay held meanwhile,
// so nothing overtakes the frames still missing; a hold that outgrows the
// socket's queue closes it, and the client resumes.
func (c *client) retryCatchUp(after int64) {
	defer c.fillDone()
	for wait := firstRetry; ; wait = nextRetry(wait) {
		select {
		case <-c.done:
			return
		case <-time.After(wait):
		}
		c.mu.Lock()
		after = c.order.retryFrom(after)
		c.mu.Unlock()
		last, err := c.catchUp(c.ctx, after)
		if err == nil {
			return
		}
		after = last
	}
}

// fill catches the socket up after a gap in the live frames: the missing
// ones come from the store, in order, before the held ones; without the
// notifier, again until it answers.
func (c *client) fill(after int64) {
	defer c.fillDone()
	c.in.metrics.gapFills.Inc()
	if last, err := c.catchUp(c.ctx, after); err != nil {
		c.retryCatchUp(last)
	}
}

func (c *client) fillDone() {
	c.mu.Lock()
	c.order.fillDone()
	c.mu.Unlock()
}

// refill catches the socket up from the last frame it was sent, when live
// frames may have been lost (the NATS connection came back).
func (c *client) refill() {
	c.mu.Lock()
	after, ok := c.order.refill()
	c.mu.Unlock()
	if ok {
		go c.fill(after)
	}
}

// catchUp replays the stored frames after afterSeq, then releases the held
// live frames, minus those replayed. When the store cannot be read it
// returns how far it got, and the live frames stay held.
func (c *client) catchUp(ctx context.Context, afterSeq int64) (int64, error) {
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	c.mu.Lock()
	c.order.startCatchUp()
	c.mu.Unlock()

	last := afterSeq
	var err error
	replayed := 0
	for {
		var reply contracts.ResumeReply
		reply, err = ask(ctx, c.in, bus.NotifierResume(), c.tenant, c.user, contracts.ResumeRequest{AfterSeq: last, Limit: resumePage})
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
	c.order.caughtUp(last)
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

// release queues the held frames in order, skipping replayed ones, and
// ends the hold once none is left; frames arriving meanwhile are held
// behind them. The caller holds flushMu.
func (c *client) release() {
	for {
		c.mu.Lock()
		batch := c.order.release()
		c.mu.Unlock()
		if batch == nil {
			return
		}
		for _, f := range batch {
			if !c.enqueueWait(f) {
				return
			}
		}
	}
}
