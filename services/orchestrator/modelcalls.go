package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
)

// Model calls never hold a bus message. A transition that needs the model
// starts a call in the model pool; the handler waits for it only briefly
// (Config.ModelInlineWait), which a local model such as the offline one
// beats, so its decision goes into the same save as the event. A call
// that takes longer is recorded in the conversation (Turn.Model, durable
// with the state), the message is acked, and the decision comes back
// later as an EvDecision applied through the same versioned save. A call
// lost to a crash is found by the sweep: on start, every pending call is
// made again; later, any whose lease ran out.

// Defaults for the model-call settings of Config.
const (
	DefaultModelConcurrency = 256
	DefaultModelInlineWait  = 25 * time.Millisecond
	DefaultModelLease       = 30 * time.Second
)

// ModelCall is a model call a turn waits for.
type ModelCall struct {
	ID    string    `json:"id"`
	Since time.Time `json:"since"` // when it was (last) started; a lease
}

// modelCallID names the model call a turn makes in its current round: the
// same state asks the same call.
func modelCallID(s State) string {
	return deriveID("m", s.Turn.TurnID, strconv.Itoa(s.Turn.Round))
}

// maxModelRounds bounds model calls a handler waits for inline; the turn's
// own bounds (steps, one correction, one re-plan) end it well before.
const maxModelRounds = 8

// askModel is the model's part of applying an event: while the transition
// needs the model, it asks it, and each call ends one of three ways.
//
//   - Inline: the decision comes within Config.ModelInlineWait (a local
//     model such as the offline one does). It is applied here, as the next
//     transition, and goes into the same save as the event.
//   - Handed off: the call is still running when the wait ends. The state
//     records it as pending (Turn.Model) and the handler goes on without
//     it; settle then tells the call whether that record was stored, and
//     only a stored call applies its decision, as an EvDecision of its own.
//   - Made again: a pending call that no process is making (the inline
//     rounds ran out, or its maker died) is started by resume: from
//     settle, from a redelivered turn, or by the sweep once its lease ran
//     out.
//
// It returns the state and effects with every inline decision applied, and
// the step that the caller must settle exactly once, after its save.
// streamed says the model already streamed the event's answer itself.
func (o *Orchestrator) askModel(ctx context.Context, ref convRef, next State, eff Effects, env Env, streamed bool) (State, Effects, *modelStep) {
	m := &modelStep{o: o, ref: ref, streamed: streamed}
	for round := 0; eff.NeedModel && round < maxModelRounds; round++ {
		call := o.startCall(ref, next, env, true)
		dev, ok := call.wait(ctx, o.cfg.ModelInlineWait)
		if !ok {
			m.running = call
			break
		}
		m.streamed = m.streamed || dev.Streamed
		var more Effects
		turnID := currentTurnID(next)
		next, more = Transition(next, dev, env)
		logRejection(o.log, more, ref.tenant, turnID)
		eff.add(more)
	}
	if eff.NeedModel && next.Turn != nil {
		next.Turn.Model = &ModelCall{ID: modelCallID(next), Since: o.now()}
	}
	m.state = next
	return next, eff, m
}

// modelStep is what askModel leaves for after the save.
type modelStep struct {
	o        *Orchestrator
	ref      convRef
	state    State      // the state to save
	streamed bool       // the model streamed the answer's tokens itself
	running  *modelCall // handed off: still running, waiting for settle
}

// settle hands the turn's model call on once the handler has tried to
// save: a call still running learns whether its pending record is stored
// (if not, it drops its decision, and the event's retry asks again); a
// pending call that nothing makes is made now, once stored.
func (m *modelStep) settle(ctx context.Context, stored bool) {
	switch {
	case m.running != nil:
		m.running.persisted <- stored
	case stored && m.state.Turn != nil && m.state.Turn.Model != nil:
		m.o.resume(ctx, m.ref, m.state)
	}
}

// callResult is a model decision as an event.
type callResult struct {
	ev Event
}

// modelCall is one call in flight, for the conversation ref: its decision
// is applied there, never to another user's conversation of the same id.
type modelCall struct {
	id  string
	ref convRef

	mu        sync.Mutex
	inline    bool            // the handler still waits for the result
	result    chan callResult // to the waiting handler
	persisted chan bool       // once not inline: did the handler store the pending call?
}

// startCall asks the model for s's next step in the pool. The caller
// either takes the result within its inline wait or lets it go (spill)
// and tells it, through persisted, whether the pending call was stored.
func (o *Orchestrator) startCall(ref convRef, s State, env Env, inline bool) *modelCall {
	c := &modelCall{id: modelCallID(s), ref: ref, inline: inline,
		result: make(chan callResult, 1), persisted: make(chan bool, 1)}
	o.track(c)
	prompt := PromptFor(s, env)
	// Everything the call needs from s is taken now: the caller goes on
	// changing its state.
	ctx := o.life
	var streamed bool
	tctx := WithTenant(o.tokenContext(ctx, ref, s, &streamed), ref.tenant)
	tctx = o.cfg.Tracer.InTurn(tctx, ref.id, currentTurnID(s))
	ok := o.pool.submit(ref.tenant, func() {
		defer o.untrack(c)
		ev := o.decide(tctx, ref.tenant, prompt)
		if ctx.Err() != nil {
			return // shutting down: the pending call stays stored, the next start makes it again
		}
		ev.ModelCall = c.id
		ev.Streamed = streamed
		c.mu.Lock()
		if c.inline {
			c.result <- callResult{ev: ev}
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		if !<-c.persisted {
			return // the handler failed before storing the call: its retry asks again
		}
		if err := o.failAt("decided"); err != nil {
			return // as if the process died with the decision in memory
		}
		o.applyDecision(ctx, ref, ev)
	})
	if !ok {
		o.untrack(c)
	}
	return c
}

// Applying a model call's decision is tried again this many times, with
// waits from decisionRetryWait doubling up to a second, when it fails in a
// way that may pass (the store briefly unavailable, say): about 3.5 s in
// all. Past that the pending call's lease is the last resort, and its user
// waits the lease out whole.
const (
	decisionAttempts  = 8
	decisionRetryWait = 50 * time.Millisecond
)

// applyDecision applies a pool call's decision as an event, trying again
// while the failure may pass. Applying is idempotent: a decision already
// applied finds its conversation no longer waiting for it.
func (o *Orchestrator) applyDecision(ctx context.Context, ref convRef, ev Event) {
	wait := decisionRetryWait
	for attempt := 1; ; attempt++ {
		err := o.apply(ctx, ref, ev)
		if err == nil || ctx.Err() != nil {
			return
		}
		if bus.IsPermanent(err) || attempt == decisionAttempts {
			o.log.Warn("apply model decision", "tenant", ref.tenant, "conversation", ref.id, "attempts", attempt, "err", err)
			return
		}
		o.metrics.decisionRetries.Inc()
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
		wait = min(2*wait, time.Second)
	}
}

// decide asks the model once and turns the outcome into an EvDecision.
func (o *Orchestrator) decide(ctx context.Context, tenant string, p Prompt) Event {
	ev := Event{Kind: EvDecision}
	start := time.Now()
	d, err := o.model.Decide(ctx, p)
	o.metrics.modelSeconds.Observe(time.Since(start).Seconds())
	switch {
	case err != nil && ctx.Err() != nil:
		ev.ModelErr = "shutting down"
	case errors.Is(err, ErrInvalidOutput):
		ev.ModelInvalid = err.Error() // logged by logRejection when applied
	case err != nil:
		o.log.Warn("model", "err", err, "tenant", tenant)
		ev.ModelErr = "unavailable"
	default:
		ev.Decision = &d
		o.metrics.decisions.WithLabelValues(string(d.Kind)).Inc()
	}
	return ev
}

// wait takes the call's result if it comes within d (and ctx lasts);
// otherwise the call goes on alone, and the caller must send on persisted.
func (c *modelCall) wait(ctx context.Context, d time.Duration) (Event, bool) {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case r := <-c.result:
			return r.ev, true
		case <-t.C:
		case <-ctx.Done():
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case r := <-c.result:
		return r.ev, true
	default:
	}
	c.inline = false
	return Event{}, false
}

func (o *Orchestrator) track(c *modelCall) {
	o.callsMu.Lock()
	o.calls[c.ref] = c
	o.callsMu.Unlock()
	o.metrics.modelInFlight.Inc()
}

func (o *Orchestrator) untrack(c *modelCall) {
	o.callsMu.Lock()
	if o.calls[c.ref] == c {
		delete(o.calls, c.ref)
	}
	o.callsMu.Unlock()
	o.metrics.modelInFlight.Dec()
}

// inFlight reports whether this process is making call id for ref.
func (o *Orchestrator) inFlight(ref convRef, id string) bool {
	o.callsMu.Lock()
	defer o.callsMu.Unlock()
	c := o.calls[ref]
	return c != nil && c.id == id
}

// resume makes the pending model call of a stored conversation unless
// this process is making it already.
func (o *Orchestrator) resume(ctx context.Context, ref convRef, s State) {
	if s.Turn == nil || s.Turn.Model == nil || o.inFlight(ref, s.Turn.Model.ID) {
		return
	}
	env, err := o.eventEnv(ctx, ref, store.UserSettings{}, Event{})
	if err != nil {
		env = o.env(ref, o.cfg.DefaultCurrency, "UTC") // the prompt's hints only; the call must not wait for them
	}
	c := o.startCall(ref, s, env, false)
	c.persisted <- true
}

// sweepOne looks at one conversation whose deadline passed (or, on start,
// any with a running turn): it ends a turn past its budget, and makes again
// a pending model call whose lease ran out, taking the lease first so that
// one replica makes it.
func (o *Orchestrator) sweepOne(ctx context.Context, ref convRef, onStart bool) error {
	conv, err := o.store.LoadConversation(ctx, ref.tenant, ref.user, ref.id)
	if err != nil {
		return err
	}
	var s State
	if err := json.Unmarshal(conv.State, &s); err != nil {
		return err
	}
	now := o.now()
	if due := dueAt(s); !due.IsZero() && !now.Before(due) {
		// A proposal to warn of or to expire; a turn running too goes on
		// at the next look, the conversation's deadline being the sooner
		// of the two.
		return o.apply(ctx, ref, Event{Kind: EvSweep})
	}
	if s.Turn == nil {
		return nil
	}
	if now.Sub(s.Turn.StartedAt) > TurnBudget {
		return o.apply(ctx, ref, Event{Kind: EvTimeout})
	}
	m := s.Turn.Model
	if m == nil || o.inFlight(ref, m.ID) || (!onStart && now.Sub(m.Since) < o.cfg.ModelLease) {
		return nil
	}
	s.Turn.Model = &ModelCall{ID: m.ID, Since: now}
	conv.DeadlineAt = deadlineOf(s, o.cfg.ModelLease)
	if conv.State, err = json.Marshal(s); err != nil {
		return err
	}
	if _, err := o.store.SaveConversation(ctx, conv, conv.Version, nil); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return nil // another replica took it, or the conversation moved on
		}
		return err
	}
	o.resume(ctx, ref, s)
	return nil
}

// deadlineOf is when the sweep must next look at a conversation: the end
// of its turn's budget, or sooner the end of its model call's lease, or
// sooner still a proposal's warning or expiry.
func deadlineOf(s State, lease time.Duration) *time.Time {
	due := dueAt(s)
	if s.Turn == nil {
		if due.IsZero() {
			return nil
		}
		return &due
	}
	d := s.Turn.StartedAt.Add(TurnBudget)
	if m := s.Turn.Model; m != nil && m.Since.Add(lease).Before(d) {
		d = m.Since.Add(lease)
	}
	if !due.IsZero() && due.Before(d) {
		d = due
	}
	return &d
}
