// Package orchestrator runs the conversation loop: it takes UserTurns from
// TURNS and ToolResults from TOOLS, asks the model, and emits clarify,
// proposal, tool-progress, answer and error events on AGENT and tool
// requests on TOOLS. Each conversation's state and the messages a change
// emits are stored together (outbox) before anything is published, so a
// redelivered message changes nothing and republishes the same ids.
package orchestrator

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/tracing"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Store is the orchestrator's view of the system of record.
type Store interface {
	LoadConversation(ctx context.Context, tenantID, userID, conversationID string) (store.Conversation, error)
	LoadConversationIfChanged(ctx context.Context, tenantID, userID, conversationID string, known int64) (store.Conversation, store.UserSettings, error)
	ConversationUsers(ctx context.Context, tenantID, conversationID string, limit int) ([]string, error)
	SaveConversation(ctx context.Context, c store.Conversation, expectedVersion int64, out []store.OutboxMessage) (int64, error)
	SaveTurn(ctx context.Context, t store.TurnChanges) (int64, error)
	AppendOutbox(ctx context.Context, out []store.OutboxMessage) error
	DueConversations(ctx context.Context, now time.Time, limit int) ([]store.Conversation, error)
	GetUserSettings(ctx context.Context, tenantID, userID string) (store.UserSettings, error)
	// SettingsEpoch moves on whenever the user's settings may have
	// changed, where the store can tell (ok); see store.Store.SettingsEpoch.
	SettingsEpoch(tenantID, userID string) (epoch uint64, ok bool)
}

// Relay publishes stored outbox messages.
type Relay interface {
	Publish(ctx context.Context, msgs []store.OutboxMessage) error
	Flush(ctx context.Context) error
}

var _ Store = (*store.Store)(nil)

// Config tunes the orchestrator.
type Config struct {
	// DefaultCurrency fills add_expense when the user named none. Default GBP.
	DefaultCurrency string
	// Confirm overrides the policy per tool: true means the tool's calls
	// wait for a yes. Tools not listed: every mutation waits.
	Confirm map[string]bool
	// FailPoint, when set, is called at each commit boundary of a handler:
	// "saved" (state and outbox written), "published" (outbox published)
	// and "handled" (about to ack). An error stops the handler there as a
	// crash would, so tests can prove that every boundary is safe.
	// Production leaves it nil. A model call that outlasts the inline
	// wait has two more: "decided" (the model answered, nothing stored)
	// and then "saved" and "published" again for the decision's save.
	FailPoint func(point string) error
	// ModelConcurrency bounds model calls in flight, shared fairly between
	// tenants. Default DefaultModelConcurrency.
	ModelConcurrency int
	// ModelInlineWait is how long a handler waits for a model call before
	// it stores the call as pending and lets its message go. Default
	// DefaultModelInlineWait; negative: never wait.
	ModelInlineWait time.Duration
	// ModelLease is how long a pending model call may go unanswered before
	// the sweep makes it again. Default DefaultModelLease.
	ModelLease time.Duration
	// ProposalTTL is how long a proposal waits for a yes before it
	// expires. Default ProposalTTL (24 hours).
	ProposalTTL time.Duration
	// Tracer records each turn's invoke_agent span and parents the
	// model calls and messages of the turn to it. Zero: no spans.
	Tracer tracing.Tracer
}

// Orchestrator handles turns and tool results. Create it with New.
type Orchestrator struct {
	cfg     Config
	store   Store
	relay   Relay
	pub     message.Publisher // core NATS, for tokens
	model   Model
	log     *slog.Logger
	now     func() time.Time
	metrics *metrics

	pool *modelPool
	// life is the lifetime of model calls, which outlive the messages
	// that started them; Sweep ends it when its own context ends.
	life     context.Context
	stopLife context.CancelFunc
	callsMu  sync.Mutex
	calls    map[convRef]*modelCall
	states   *stateCache
}

// New builds an orchestrator. pub publishes answer tokens to deliver
// subjects; relay publishes everything durable. Run Sweep for as long as
// the orchestrator serves: it owns the model calls in flight.
func New(cfg Config, st Store, relay Relay, pub message.Publisher, model Model, reg prometheus.Registerer, log *slog.Logger, now func() time.Time) *Orchestrator {
	if cfg.DefaultCurrency == "" {
		cfg.DefaultCurrency = "GBP"
	}
	if cfg.ModelConcurrency <= 0 {
		cfg.ModelConcurrency = DefaultModelConcurrency
	}
	if cfg.ModelInlineWait == 0 {
		cfg.ModelInlineWait = DefaultModelInlineWait
	}
	if cfg.ModelLease <= 0 {
		cfg.ModelLease = DefaultModelLease
	}
	life, stop := context.WithCancel(context.Background())
	return &Orchestrator{cfg: cfg, store: st, relay: relay, pub: pub, model: model, log: log, now: now, metrics: newMetrics(reg),
		pool: newModelPool(cfg.ModelConcurrency), life: life, stopLife: stop, calls: map[convRef]*modelCall{},
		states: newStateCache(stateCacheSize)}
}

// Register adds the orchestrator's handlers to a router.
func (o *Orchestrator) Register(r *message.Router, sub message.Subscriber) {
	for _, c := range bus.OrchestratorConsumers() {
		handler := o.HandleTurn
		if c.Stream == bus.StreamTools {
			handler = o.HandleToolResult
		}
		r.AddConsumerHandler(c.Name, c.Name, sub, handler)
	}
}

// needsConfirm is the server's confirmation policy.
func (o *Orchestrator) needsConfirm(tool string) bool {
	if v, ok := o.cfg.Confirm[tool]; ok {
		return v
	}
	return mutates(tool)
}

// HandleTurn applies one UserTurn exactly once.
func (o *Orchestrator) HandleTurn(msg *message.Message) error {
	var turn contracts.UserTurn
	if err := contracts.Decode(msg.Payload, &turn); err != nil {
		o.metrics.turns.WithLabelValues("invalid").Inc()
		return bus.Permanent(fmt.Errorf("decode turn: %w", err))
	}
	want, werr := bus.TurnSubject(turn.TenantID, turn.ConversationID)
	if err := bus.CheckIdentity(msg, want, werr, turn.TenantID, turn.UserID, turn.ConversationID); err != nil {
		o.metrics.turns.WithLabelValues("invalid").Inc()
		return err
	}
	ref := convRef{tenant: turn.TenantID, user: turn.UserID, id: turn.ConversationID}
	if err := o.apply(msg.Context(), ref, Event{Kind: EvTurn, Turn: &turn}); err != nil {
		return err
	}
	return o.failAt("handled")
}

// HandleToolResult applies one ToolResult exactly once, to the
// conversation of the user its Purser-User header names: the toolrunner
// sets it from the signed ToolRequest, and the subject names only tenant
// and conversation.
func (o *Orchestrator) HandleToolResult(msg *message.Message) error {
	subject := msg.Metadata.Get(bus.MetaSubject)
	tenant, conv, err := bus.ParseToolResultSubject(subject)
	if err != nil {
		return bus.Permanent(err)
	}
	if err := bus.CheckIdentity(msg, subject, nil, tenant, "", conv); err != nil {
		return err
	}
	res, err := decodeToolResult(msg.Payload)
	if err != nil {
		return bus.Permanent(fmt.Errorf("decode tool result: %w", err))
	}
	ref := convRef{tenant: tenant, user: msg.Metadata.Get(bus.HeaderUser), id: conv}
	if ref.user == "" {
		if ref.user, err = o.resultOwner(msg.Context(), tenant, conv, res.CallID); err != nil || ref.user == "" {
			return err // none: nothing waits for the result
		}
	} else if !bus.ValidToken(ref.user) {
		return bus.Permanent(fmt.Errorf("tool result %s: bad user header", res.CallID))
	}
	if err := o.apply(msg.Context(), ref, Event{Kind: EvToolResult, Result: &res}); err != nil {
		return err
	}
	return o.failAt("handled")
}

// maxResultOwners bounds the conversations of one id that resultOwner reads.
const maxResultOwners = 16

// resultOwner finds the user of a tool result that names none: one
// published before conversations were per user, when an id had one owner
// in its tenant. The conversation's one user is its owner; of several
// (others chose the id since), the one whose turn waits for the call.
// None ("") means nothing waits for the result.
func (o *Orchestrator) resultOwner(ctx context.Context, tenant, convID, callID string) (string, error) {
	users, err := o.store.ConversationUsers(ctx, tenant, convID, maxResultOwners)
	if err != nil {
		return "", fmt.Errorf("owner of conversation %s: %w", convID, err)
	}
	if len(users) <= 1 {
		return strings.Join(users, ""), nil
	}
	for _, u := range users {
		_, _, _, s, _, err := o.load(ctx, convRef{tenant: tenant, user: u, id: convID}, readFirst)
		if err != nil {
			return "", err
		}
		if s.Turn != nil && slices.ContainsFunc(s.Turn.Open, func(c OpenCall) bool { return c.CallID == callID }) {
			return u, nil
		}
	}
	return "", nil
}

func (o *Orchestrator) failAt(point string) error {
	if o.cfg.FailPoint == nil {
		return nil
	}
	return o.cfg.FailPoint(point)
}

// Sweep looks, every interval, at conversations whose deadline passed:
// it ends turns that outlived their budget while waiting for something
// that never came (a tool result from a toolrunner that is down), so that
// no turn hangs, and makes again model calls whose lease ran out (their
// maker died). Its first pass, at once, makes again every pending model
// call, since this process has none in flight yet. Replicas may sweep at
// once: the conversation's version lets one of them act. Sweep owns the
// model calls: when ctx ends it stops them (they stay pending in the
// store) and waits for their goroutines.
func (o *Orchestrator) Sweep(ctx context.Context, interval time.Duration) {
	defer func() {
		o.stopLife()
		o.pool.close()
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for first := true; ; first = false {
		horizon := o.now()
		if first {
			horizon = horizon.Add(TurnBudget + o.cfg.ModelLease)
		}
		due, err := o.store.DueConversations(ctx, horizon, 1000)
		if err != nil && ctx.Err() == nil {
			o.log.Warn("turn sweep", "err", err)
		}
		for _, c := range due {
			if err := o.sweepOne(ctx, convRef{tenant: c.TenantID, user: c.UserID, id: c.ConversationID}, first); err != nil && ctx.Err() == nil {
				o.log.Warn("turn sweep", "tenant", c.TenantID, "conversation", c.ConversationID, "err", err)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// outbox encodes outputs as outbox messages, all but the live ones
// (ToSocket), which liveProgress sends; turnID correlates those whose
// payload names no turn, so a turn is one trace.
func (o *Orchestrator) outbox(tenant, user, convID, turnID string, outputs []Output) ([]store.OutboxMessage, error) {
	now := o.now().UTC()
	out := make([]store.OutboxMessage, 0, len(outputs))
	for _, op := range outputs {
		if op.To == ToSocket {
			continue
		}
		var subject string
		var err error
		switch op.To {
		case ToTool:
			subject, err = bus.ToolRequestSubject(op.Tool)
		case ToNotify:
			subject, err = bus.NotifySubject(tenant, user)
		default:
			subject, err = bus.AgentSubject(tenant, user, convID)
		}
		if err != nil {
			return nil, bus.Permanent(err)
		}
		correlation := cmp.Or(correlationOf(op.Payload), turnID)
		payload, err := json.Marshal(op.Payload)
		if err != nil {
			return nil, bus.Permanent(fmt.Errorf("encode %s: %w", op.Type, err))
		}
		headers := bus.HeaderMap(op.ID, bus.Headers{Type: op.Type, Tenant: tenant, User: user, Conversation: convID, Correlation: correlation}, 1)
		headers[bus.HeaderCreatedAt] = now.Format(time.RFC3339Nano)
		out = append(out, store.OutboxMessage{ID: op.ID, Subject: subject, Headers: headers, Payload: payload, CreatedAt: now})
	}
	return out, nil
}

// streamTokens sends the answer to the user's sockets before the durable
// Answer arrives, for a model that did not stream it itself. The text is
// all there at once, so it goes as one token: cut into words it would
// cost a bus message and a socket write per word, and reach the screen in
// the same instant anyway. Tokens are best effort: a lost token costs
// nothing, the Answer carries the whole text.
func (o *Orchestrator) streamTokens(ref convRef, eff Effects) {
	subject, err := bus.DeliverSubject(ref.tenant, ref.user)
	if err != nil || o.pub == nil {
		return
	}
	var turnID string
	for _, op := range eff.Outputs {
		if a, ok := op.Payload.(contracts.Answer); ok {
			turnID = a.TurnID
		}
	}
	f := contracts.ServerFrame{Type: contracts.FrameToken, ConversationID: ref.id, TurnID: turnID, At: o.now().UTC(),
		Token: &contracts.TokenBody{Text: eff.Stream}}
	b, _ := json.Marshal(&f)
	_ = o.pub.Publish(subject, o.tokenMessage(turnID+"-tok-0", b, ref, turnID))
}

// liveProgress sends the tool progress of eff to the user's sockets as
// tool_start and tool_result frames, once the event that made it is saved.
// Like tokens, progress is best effort and never stored: through the
// outbox, the AGENT stream and the notifier's frames it cost each call two
// stored frames, two outbox rows and two JetStream messages, a third of
// the frames a bench turn stored (docs/performance.md). A call's start is
// published before its ToolRequest, so before its result can exist.
func (o *Orchestrator) liveProgress(ref convRef, turnID string, eff Effects) {
	if o.pub == nil {
		return
	}
	var subject string
	for _, op := range eff.Outputs {
		p, ok := op.Payload.(contracts.ToolProgress)
		if op.To != ToSocket || !ok {
			continue
		}
		if subject == "" {
			var err error
			if subject, err = bus.DeliverSubject(ref.tenant, ref.user); err != nil {
				return
			}
		}
		f := contracts.ServerFrame{Type: p.FrameType(), ConversationID: ref.id, TurnID: turnID, At: o.now().UTC(), Tool: &p}
		b, err := json.Marshal(&f)
		if err != nil {
			continue
		}
		_ = o.pub.Publish(subject, bus.NewMessage(op.ID, b, bus.Headers{Type: f.Type, Tenant: ref.tenant, User: ref.user,
			Conversation: ref.id, Correlation: turnID}))
	}
}

// tokenContext gives the model a sink that forwards answer tokens to the
// user's sockets as they arrive (best effort, like streamTokens).
func (o *Orchestrator) tokenContext(ctx context.Context, ref convRef, s State, streamed *bool) context.Context {
	subject, err := bus.DeliverSubject(ref.tenant, ref.user)
	if err != nil || o.pub == nil || s.Turn == nil {
		return ctx
	}
	turnID := s.Turn.TurnID
	round := s.Turn.Round
	started := s.Turn.StartedAt
	index := 0
	return WithTokenSink(ctx, func(text string) {
		if text == "" {
			return
		}
		if !*streamed && round == 0 {
			o.metrics.firstToken.Observe(o.now().Sub(started).Seconds())
		}
		*streamed = true
		f := contracts.ServerFrame{Type: contracts.FrameToken, ConversationID: ref.id, TurnID: turnID, At: o.now().UTC(),
			Token: &contracts.TokenBody{Text: text, Index: index}}
		b, _ := json.Marshal(&f)
		_ = o.pub.Publish(subject, o.tokenMessage(fmt.Sprintf("%s-tok-%d-%d", turnID, round, index), b, ref, turnID))
		index++
	})
}

func (o *Orchestrator) observe(ref convRef, ev Event, eff Effects, started time.Time) {
	if ev.Kind == EvSweep {
		return // time passing, not a turn
	}
	if ev.Kind == EvTurn {
		o.log.Info("turn started", "tenant", ref.tenant, "conversation", ref.id, "turn", ev.Turn.TurnID, "confirm", ev.Turn.Confirm != nil)
	}
	outcome := "continued"
	for _, op := range eff.Outputs {
		if end := turnOutcome(op.Type); end != "" {
			outcome = end
		}
		if te, ok := op.Payload.(contracts.TurnError); ok && op.Type == contracts.TypeTurnError {
			o.metrics.bounds.WithLabelValues(te.Code).Inc()
		}
	}
	o.metrics.turns.WithLabelValues(outcome).Inc()
	if outcome != "continued" && !started.IsZero() {
		took := o.now().Sub(started)
		o.metrics.turnSeconds.WithLabelValues(outcome).Observe(took.Seconds())
		o.log.Info("turn ended", "tenant", ref.tenant, "conversation", ref.id, "outcome", outcome, "duration_ms", took.Milliseconds())
	}
	for _, n := range eff.EndedSteps {
		o.metrics.steps.Observe(float64(n))
	}
}

// settingsOf is the user's settings: settings, when they are the user's
// (read with the conversation), else read now (a new conversation:
// nothing was read with it).
func (o *Orchestrator) settingsOf(ctx context.Context, ref convRef, settings store.UserSettings) (store.UserSettings, error) {
	if settings.UserID == ref.user {
		return settings, nil
	}
	set, err := o.store.GetUserSettings(ctx, ref.tenant, ref.user)
	if err != nil {
		return store.UserSettings{}, fmt.Errorf("user settings: %w", err)
	}
	return set, nil
}

// userDefaults are the currency of an amount the user names none for (the
// one their client sent with the turn, the chat contract's userContext,
// else their own setting, else the configured default), the time zone
// of a turn that names none (their setting, else UTC) and the language of
// a turn whose client names no locale (their setting, else none). settings
// are the user's if read with the conversation; zero, they are read here.
func (o *Orchestrator) userDefaults(ctx context.Context, ref convRef, settings store.UserSettings, ev Event) (currency, zone, language string, err error) {
	currency, zone = o.cfg.DefaultCurrency, "UTC"
	set, err := o.settingsOf(ctx, ref, settings)
	if err != nil {
		return "", "", "", err
	}
	language = set.Language
	if set.Currency != "" {
		currency = set.Currency
	}
	if set.Timezone != "" {
		zone = set.Timezone
	}
	if ev.Turn != nil && ev.Turn.Currency != "" {
		currency = ev.Turn.Currency
	}
	return currency, zone, language, nil
}
