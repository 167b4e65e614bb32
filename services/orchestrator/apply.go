package orchestrator

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// convRef names one conversation: a user's own, under the id their client
// chose. Two users of a tenant who choose the same id have two
// conversations, which never meet: every event is applied to the
// conversation of its user.
type convRef struct {
	tenant, user, id string
}

// apply applies ev to a conversation exactly once, trying again on the
// fresh state when another replica changed the conversation meanwhile.
// An event within a turn (a tool's result, a model's decision) starts
// from the state this process kept, unread (see stateCache); so does a
// new turn while the store can say that the user's settings did not
// change since they were read (a SQLite store, which one process owns).
// Any other event, or a retry, reads the conversation first.
func (o *Orchestrator) apply(ctx context.Context, ref convRef, ev Event) error {
	use := readFirst
	switch {
	case withinTurn(ev):
		use = takeKept
	case ev.Kind == EvTurn:
		use = takeKeptIfSettings
	}
	for attempt := 1; ; attempt++ {
		err := o.applyOnce(ctx, ref, ev, use)
		use = readFirst
		if errors.Is(err, errUnread) {
			continue // once: the next attempt reads
		}
		if !errors.Is(err, store.ErrConflict) || attempt == 5 {
			return err
		}
	}
}

// keptUse is how an event's load may take the state this process kept.
type keptUse int

const (
	// readFirst reads the conversation, taking the kept state only while
	// the stored version is the kept one.
	readFirst keptUse = iota
	// takeKept takes the kept state unread.
	takeKept
	// takeKeptIfSettings takes the kept state unread while the user's
	// settings are known to be those kept with it (Store.SettingsEpoch).
	// The conversation itself needs no read for that: its save is made
	// at the kept version, and fails if anything else saved it since.
	takeKeptIfSettings
)

// withinTurn reports whether ev may start from the kept state without
// reading the conversation: a tool's result or a model's decision, which
// belong to a turn that began with a read. The turn goes on with the
// settings read then, except after a tool that changes them.
func withinTurn(ev Event) bool {
	switch ev.Kind {
	case EvToolResult:
		return ev.Result.Tool != contracts.ToolSetPreferences
	case EvDecision:
		return true
	}
	return false
}

// errUnread says that an event applied to a kept state, unread, would
// have been dropped: a state that may be stale cannot say that nothing
// waits for the event, so it is applied again from a read.
var errUnread = errors.New("dropped by a state not read")

// applyOnce applies ev to the conversation as loaded: load, admit,
// transition (asking the model while the transition needs it), store the
// new state with its proposals and outbox, publish. Nothing is published
// before it is stored, and the message is acked only after this returns
// nil. A conversation another replica changed since the load returns
// store.ErrConflict and stores nothing.
func (o *Orchestrator) applyOnce(ctx context.Context, ref convRef, ev Event, use keptUse) error {
	conv, settings, epoch, state, unread, err := o.load(ctx, ref, use)
	if err != nil {
		return err
	}
	if done, err := o.admit(ctx, ref, conv, &state, ev); done {
		if unread {
			return errUnread
		}
		return err
	}
	if settings, err = o.settingsOf(ctx, ref, settings); err != nil {
		return err
	}
	env, err := o.eventEnv(ctx, ref, settings, ev)
	if err != nil {
		return err
	}
	next, eff := Transition(state, ev, env)
	if ev.Kind == EvDecision {
		logRejection(o.log, eff, ref.tenant, currentTurnID(state))
	}
	if unread && eff.NeedModel && !isLocal(o.model) {
		if err := o.stillStored(ctx, ref, conv.Version); err != nil {
			return err
		}
	}
	next, eff, model := o.askModel(ctx, ref, next, eff, env, ev.Streamed)
	stored := false
	defer func() { model.settle(ctx, stored) }()
	out, version, err := o.save(ctx, conv, state, next, eff)
	if err != nil {
		return err
	}
	stored = true
	o.states.put(ref, cachedState{conv: savedAs(conv, version), settings: settings, epoch: epoch, state: next})
	if err := o.failAt("saved"); err != nil {
		return err
	}
	o.observe(ref, ev, eff, turnStart(state, next, ev, env.Now))
	o.traceEnds(ref, state, eff, env.Now)
	turnID := cmp.Or(currentTurnID(next), currentTurnID(state))
	o.liveProgress(ref, turnID, eff)
	if eff.Stream != "" && !model.streamed {
		o.streamTokens(ref, eff)
	}
	ctx = o.cfg.Tracer.InTurn(ctx, ref.id, turnID)
	if err := o.relay.Publish(ctx, out); err != nil {
		return err
	}
	return o.failAt("published")
}

// load reads a conversation, with the settings of the user it belongs to,
// and decodes its state, or takes the state this process saved last while
// it is still the stored one (stateCache). With takeKept, or
// takeKeptIfSettings while the user's settings epoch is the one kept, the
// kept state is taken unread (unread reports it): its save then fails
// with store.ErrConflict if another replica changed the conversation
// since. epoch is the settings epoch taken before the settings were read
// (or kept with them). A conversation never stored is an empty one
// (Version 0, and no settings read).
func (o *Orchestrator) load(ctx context.Context, ref convRef, use keptUse) (_ store.Conversation, _ store.UserSettings, epoch settingsEpoch, _ State, unread bool, _ error) {
	kept, ok := o.states.take(ref)
	if ok && (use == takeKept || use == takeKeptIfSettings && o.settingsEpoch(ref) == kept.epoch && kept.epoch.known) {
		return kept.conv, kept.settings, kept.epoch, kept.state, true, nil
	}
	epoch = o.settingsEpoch(ref) // before the read: a change after it moves it on
	conv, settings, err := o.store.LoadConversationIfChanged(ctx, ref.tenant, ref.user, ref.id, kept.conv.Version)
	switch {
	case errors.Is(err, store.ErrNotFound):
		conv = store.Conversation{TenantID: ref.tenant, UserID: ref.user, ConversationID: ref.id}
	case err != nil:
		return conv, settings, epoch, State{}, false, fmt.Errorf("load conversation: %w", err)
	}
	if ok && conv.Version == kept.conv.Version && conv.State == nil {
		return conv, settings, epoch, kept.state, false, nil
	}
	var state State
	if len(conv.State) > 0 {
		if err := json.Unmarshal(conv.State, &state); err != nil {
			return conv, settings, epoch, State{}, false, bus.Permanent(fmt.Errorf("conversation %s state: %w", ref.id, err))
		}
	}
	return conv, settings, epoch, state, false, nil
}

// settingsEpoch is the user's settings epoch as the store gives it
// (Store.SettingsEpoch); known is false where the store gives none.
type settingsEpoch struct {
	n     uint64
	known bool
}

func (o *Orchestrator) settingsEpoch(ref convRef) settingsEpoch {
	n, known := o.store.SettingsEpoch(ref.tenant, ref.user)
	return settingsEpoch{n, known}
}

// stillStored makes sure that version is still the conversation's stored
// one before a kept state, taken unread, asks a remote model: a stale
// state's call would be paid for, its tokens streamed to the person, and
// then made again once its save failed. A newer version is errUnread, and
// the event is applied again from a read. A local model's call needs no
// such read: a stale state costs only its save's failure.
func (o *Orchestrator) stillStored(ctx context.Context, ref convRef, version int64) error {
	conv, _, err := o.store.LoadConversationIfChanged(ctx, ref.tenant, ref.user, ref.id, version)
	switch {
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("load conversation: %w", err)
	case err != nil || conv.Version != version:
		return errUnread
	}
	return nil
}

// admit decides whether ev applies to the loaded conversation, which is
// always the conversation of ev's user (there is no one else's to be
// refused). A turn applied before only makes sure its pending model call
// runs (a crash may have come between storing the call and making it); an
// event other than a turn for a conversation never stored, and a decision
// the conversation no longer waits for, are dropped: nothing waits for
// them. done says ev was dealt with here, err then being the handler's
// result. Otherwise admit clears the model call the decision answers.
func (o *Orchestrator) admit(ctx context.Context, ref convRef, conv store.Conversation, state *State, ev Event) (done bool, err error) {
	if ev.Kind != EvTurn && conv.Version == 0 {
		return true, nil
	}
	switch ev.Kind {
	case EvTurn:
		if state.hasApplied(ev.Turn.TurnID) {
			o.metrics.turns.WithLabelValues("duplicate").Inc()
			o.resume(ctx, ref, *state)
			return true, o.relay.Flush(ctx)
		}
	case EvDecision:
		if state.Turn == nil || state.Turn.Model == nil || state.Turn.Model.ID != ev.ModelCall {
			return true, nil
		}
		// A new turn, not a change to the loaded one: a kept state is
		// shared with the model calls that still read it (stateCache).
		t := *state.Turn
		t.Model = nil
		state.Turn = &t
	}
	return false, nil
}

// eventEnv is what a transition of ev knows of the world: now, and the
// user's default currency and time zone. settings are the user's, read
// with the conversation (zero: not read).
func (o *Orchestrator) eventEnv(ctx context.Context, ref convRef, settings store.UserSettings, ev Event) (Env, error) {
	currency, zone, language, err := o.userDefaults(ctx, ref, settings, ev)
	if err != nil {
		return Env{}, err
	}
	env := o.env(ref, currency, zone)
	env.DefaultLocale = language
	return env, nil
}

func (o *Orchestrator) env(ref convRef, currency, zone string) Env {
	return Env{TenantID: ref.tenant, ConversationID: ref.id, Now: o.now(), DefaultCurrency: currency, DefaultTimezone: zone,
		NeedsConfirm: o.needsConfirm, ProposalTTL: o.cfg.ProposalTTL}
}

// save stores a transition's result as one turn's changes: the new state,
// the proposals it made or decided, and its outbox, which it returns for
// publishing. before is the state loaded, whose turn correlates the
// outputs of a turn that just ended.
func (o *Orchestrator) save(ctx context.Context, conv store.Conversation, before, next State, eff Effects) ([]store.OutboxMessage, int64, error) {
	tenant, user, convID := conv.TenantID, conv.UserID, conv.ConversationID
	out, err := o.outbox(tenant, user, convID, cmp.Or(currentTurnID(next), currentTurnID(before)), eff.Outputs)
	if err != nil {
		return nil, 0, err
	}
	conv.DeadlineAt = deadlineOf(next, o.cfg.ModelLease)
	buf := stateBufs.Get().(*bytes.Buffer)
	defer putStateBuf(buf)
	if err := encodeState(buf, &next); err != nil {
		return nil, 0, bus.Permanent(fmt.Errorf("encode state: %w", err))
	}
	conv.State = buf.Bytes()
	now := o.now()
	conv.UpdatedAt = now
	changes := store.TurnChanges{Conversation: conv, Outbox: out, At: now}
	for _, p := range eff.NewProposals {
		sp := store.Proposal{ID: p.ID, TenantID: tenant, UserID: user, ConversationID: convID, TurnID: p.TurnID,
			Tool: p.Tool, Args: p.Args, Summary: p.Summary, Status: store.ProposalPending, Revision: p.Revision, ExpiresAt: p.ExpiresAt, CreatedAt: now}
		if slices.Contains(eff.Approved, p.ID) {
			sp.Status = store.ProposalApproved
			sp.DecidedAt = &now
		}
		changes.NewProposals = append(changes.NewProposals, sp)
	}
	for _, c := range eff.Changes {
		changes.ProposalChanges = append(changes.ProposalChanges, store.ProposalChange(c))
	}
	version, err := o.store.SaveTurn(ctx, changes)
	if err != nil {
		return nil, 0, fmt.Errorf("save turn: %w", err)
	}
	for _, c := range eff.Changes {
		o.metrics.proposals.WithLabelValues(c.To).Inc()
	}
	return out, version, nil
}

// stateBufs holds the buffers states are encoded into for their save. A
// state's JSON (about 5 KB) is needed only until the save returns: the
// store keeps a packed copy, or sends it to Postgres, and nothing else
// holds it.
var stateBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putStateBuf gives buf back, unless a rare large state grew it.
func putStateBuf(buf *bytes.Buffer) {
	if buf.Cap() <= 256<<10 {
		buf.Reset()
		stateBufs.Put(buf)
	}
}

// savedAs is what the stateCache keeps of conv once saved at version: its
// names and version, not its state's bytes.
func savedAs(conv store.Conversation, version int64) store.Conversation {
	return store.Conversation{TenantID: conv.TenantID, UserID: conv.UserID, ConversationID: conv.ConversationID, Version: version}
}

// turnStart is when the turn an event belongs to started (zero if none):
// a turn that began and ended in this event started now.
func turnStart(before, after State, ev Event, now time.Time) time.Time {
	switch {
	case after.Turn != nil:
		return after.Turn.StartedAt
	case before.Turn != nil:
		return before.Turn.StartedAt
	case ev.Kind == EvTurn:
		return now
	}
	return time.Time{}
}
