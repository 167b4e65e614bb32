// Package notifier turns agent events and notifications into client frames:
// it gives each frame a per-user increasing seq, stores it so a reconnecting
// client can catch up, keeps the notification inbox, and publishes frames on
// purser.deliver.<tenant>.<user> for the ingress to relay.
package notifier

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/tracing"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Store is what the notifier keeps.
type Store interface {
	AppendFrame(ctx context.Context, tenantID, userID, eventID string, payload []byte, at time.Time) (seq int64, created bool, err error)
	AppendConversationFrame(ctx context.Context, tenantID, userID, conversationID, eventID string, payload []byte, at time.Time) (seq int64, created bool, err error)
	ConversationFrames(ctx context.Context, tenantID, userID, conversationID string, beforeSeq int64, limit int) ([]store.Frame, error)
	AppendUserMessage(ctx context.Context, tenantID, userID, conversationID, eventID, title string, payload []byte, at time.Time) (seq int64, created bool, err error)
	ListConversations(ctx context.Context, tenantID, userID string, limit int) ([]store.ConversationTitle, error)
	FramesAfter(ctx context.Context, tenantID, userID string, afterSeq int64, limit int) ([]store.Frame, error)
	FramesOfTurn(ctx context.Context, tenantID, userID, turnID string, limit int) ([]store.Frame, error)
	ListAudit(ctx context.Context, tenantID string, limit int) ([]store.AuditEntry, error)
	ListUserAudit(ctx context.Context, tenantID, userID string, limit int) ([]store.AuditEntry, error)
	GetProposal(ctx context.Context, tenantID, id string) (store.Proposal, error)
	PendingProposals(ctx context.Context, tenantID, userID, conversationID string, now time.Time, limit int) ([]store.Proposal, error)
	AddNotification(ctx context.Context, n store.Notification) (created bool, err error)
	ListNotifications(ctx context.Context, tenantID, userID string, unreadOnly bool, limit int) ([]store.Notification, error)
	MarkNotificationRead(ctx context.Context, tenantID, userID, id string, at time.Time) error
	GetUserSettings(ctx context.Context, tenantID, userID string) (store.UserSettings, error)
	PutUserSettings(ctx context.Context, u store.UserSettings) (store.UserSettings, error)
	ListLedger(ctx context.Context, f store.LedgerFilter) (store.LedgerPage, error)
	LedgerSummary(ctx context.Context, tenantID, userID, from, to string) (store.LedgerSummary, error)
}

var _ Store = (*store.Store)(nil)

// Notifier handles AGENT and NOTIFY messages. Handlers are idempotent: the
// same event (by message id) keeps the seq it was first given and is
// republished with it.
type Notifier struct {
	store  Store
	pub    message.Publisher
	log    *slog.Logger
	now    func() time.Time
	frames *prometheus.CounterVec
	lag    prometheus.Histogram
	// users serialise, per user, giving a frame its seq and publishing
	// it, so that this replica sends a user's frames in seq order even
	// when AGENT and NOTIFY events of that user are handled at once. One
	// lock per user (not stripes): a stripe shared by many users made
	// each wait behind the others' commits.
	users userLocks
	// searcher and records answer searches and cited records (search.go);
	// nil until WithSearch.
	searcher Searcher
	records  RecordStore
	tracer   tracing.Tracer
}

// userLock locks tenant/user's frames.
func (n *Notifier) userLock(tenant, user string) func() {
	return n.users.lock(tenant + "\x00" + user)
}

// userLocks is a lock per key, kept only while someone holds or waits
// for it.
type userLocks struct {
	mu    sync.Mutex
	locks map[string]*userLockEntry
}

type userLockEntry struct {
	mu   sync.Mutex
	refs int
}

func (l *userLocks) lock(key string) func() {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = make(map[string]*userLockEntry)
	}
	e := l.locks[key]
	if e == nil {
		e = &userLockEntry{}
		l.locks[key] = e
	}
	e.refs++
	l.mu.Unlock()
	e.mu.Lock()
	return func() {
		e.mu.Unlock()
		l.mu.Lock()
		if e.refs--; e.refs == 0 {
			delete(l.locks, key)
		}
		l.mu.Unlock()
	}
}

// New builds a notifier publishing client frames with pub (core NATS).
func New(st Store, pub message.Publisher, reg prometheus.Registerer, log *slog.Logger, now func() time.Time) *Notifier {
	n := &Notifier{
		store: st, pub: pub, log: log, now: now,
		frames: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_notifier_frames_total", Help: "Client frames published, by type."}, []string{"type"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "purser_notifier_delivery_lag_seconds", Help: "Time from an event's creation to its frame's publication.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}),
	}
	reg.MustRegister(n.frames, n.lag)
	return n
}

// Register adds the notifier's handlers to a router.
func (n *Notifier) Register(r *message.Router, sub message.Subscriber) {
	r.AddConsumerHandler(bus.ConsumerNotifierAgent, bus.ConsumerNotifierAgent, sub, n.HandleAgent)
	r.AddConsumerHandler(bus.ConsumerNotifierNotify, bus.ConsumerNotifierNotify, sub, n.HandleNotify)
}

// HandleAgent turns one AGENT event into a client frame.
func (n *Notifier) HandleAgent(msg *message.Message) error {
	tenant, user, conv, err := bus.ParseAgentSubject(msg.Metadata.Get(bus.MetaSubject))
	if err != nil {
		return bus.Permanent(err)
	}
	if err := bus.CheckIdentity(msg, msg.Metadata.Get(bus.MetaSubject), nil, tenant, user, conv); err != nil {
		return err
	}
	frame := contracts.ServerFrame{ConversationID: conv, At: n.now().UTC()}
	typ := msg.Metadata.Get(bus.HeaderType)
	switch typ {
	case contracts.TypeClarify:
		frame.Type, frame.Clarify = contracts.FrameClarify, new(contracts.Clarify)
		err = decode(msg, frame.Clarify)
		frame.TurnID = frame.Clarify.TurnID
	case contracts.TypeProposal:
		frame.Type, frame.Proposal = contracts.FrameProposal, new(contracts.Proposal)
		err = decode(msg, frame.Proposal)
		frame.TurnID = frame.Proposal.TurnID
	case contracts.TypeToolProgress:
		// Only from a release before tool progress went live (the
		// orchestrator now sends it to the sockets itself): stored as it
		// was, so an upgrade loses none of the events in flight.
		frame.Tool = new(contracts.ToolProgress)
		err = decode(msg, frame.Tool)
		frame.Type = frame.Tool.FrameType()
		frame.TurnID = msg.Metadata.Get(bus.HeaderCorrelation)
	case contracts.TypeAnswer:
		frame.Type, frame.Answer = contracts.FrameAnswer, new(contracts.Answer)
		err = decode(msg, frame.Answer)
		frame.TurnID = frame.Answer.TurnID
	case contracts.TypeTurnError:
		te := new(contracts.TurnError)
		err = decode(msg, te)
		frame.Type, frame.TurnID = contracts.FrameError, te.TurnID
		frame.Error = &contracts.ErrorBody{Code: te.Code, Message: te.Message, RetryAfter: te.RetryAfter, Refused: te.Refused}
	default:
		return bus.Permanent(fmt.Errorf("agent event of unknown type %q", typ))
	}
	if err != nil {
		return err
	}
	_, err = n.deliver(msg, tenant, user, frame, "")
	return err
}

// HandleNotify stores one notification in the inbox and delivers it.
func (n *Notifier) HandleNotify(msg *message.Message) error {
	tenant, user, err := bus.ParseNotifySubject(msg.Metadata.Get(bus.MetaSubject))
	if err != nil {
		return bus.Permanent(err)
	}
	if err := bus.CheckIdentity(msg, msg.Metadata.Get(bus.MetaSubject), nil, tenant, user, ""); err != nil {
		return err
	}
	var note contracts.Notification
	if err := decode(msg, &note); err != nil {
		return err
	}
	if _, err := n.store.AddNotification(msg.Context(), store.Notification{
		TenantID: tenant, UserID: user, ID: note.ID, Kind: note.Kind, Title: note.Title, Body: note.Body,
		Data: note.Data, CreatedAt: note.CreatedAt,
	}); err != nil {
		return fmt.Errorf("store notification: %w", err)
	}
	frame := contracts.ServerFrame{Type: contracts.FrameNotification, At: n.now().UTC(), Notification: &note}
	_, err = n.deliver(msg, tenant, user, frame, "")
	return err
}

// deliver stores the frame under the user's next seq (or finds the seq it
// already has) and publishes it. A user's own message has a title: its
// conversation is touched (and titled the first time) in the same commit.
// created is false when the frame was stored before (its event came again).
func (n *Notifier) deliver(msg *message.Message, tenant, user string, frame contracts.ServerFrame, title string) (created bool, err error) {
	ctx, span := n.tracer.Deliver(msg.Context(), frame.ConversationID, cmp.Or(frame.TurnID, msg.Metadata.Get(bus.HeaderCorrelation)), frame.Type)
	defer func() { tracing.End(span, err, "") }()
	stored, err := json.Marshal(&frame)
	if err != nil {
		return false, bus.Permanent(fmt.Errorf("encode frame: %w", err))
	}
	defer n.userLock(tenant, user)()
	if frame.Type == contracts.FrameToolStart && frame.Tool != nil && frame.TurnID != "" {
		// A start redelivered after its call's result (the notifier died
		// between the two) would show the call running again, after the
		// turn's answer: it is dropped.
		ended, err := n.callEnded(ctx, tenant, user, frame.TurnID, frame.Tool.CallID)
		if err != nil {
			return false, fmt.Errorf("frames of the turn: %w", err)
		}
		if ended {
			n.log.Info("tool start after its result dropped", "tenant", tenant, "turn", frame.TurnID, "call", frame.Tool.CallID)
			return false, nil
		}
	}
	var seq int64
	if title != "" {
		seq, created, err = n.store.AppendUserMessage(ctx, tenant, user, frame.ConversationID, msg.UUID, title, stored, frame.At)
	} else {
		seq, created, err = n.store.AppendConversationFrame(ctx, tenant, user, frame.ConversationID, msg.UUID, stored, frame.At)
	}
	if err != nil {
		return false, fmt.Errorf("append frame: %w", err)
	}
	frame.Seq = seq
	payload, err := withSeq(stored, frame)
	if err != nil {
		return false, bus.Permanent(fmt.Errorf("encode frame: %w", err))
	}
	if err := n.publish(ctx, msg, tenant, user, frame, payload); err != nil {
		return false, err
	}
	if at, err := time.Parse(time.RFC3339Nano, msg.Metadata.Get(bus.HeaderCreatedAt)); err == nil {
		n.lag.Observe(n.now().Sub(at).Seconds())
	}
	return created, nil
}

// callEnded tells whether the user's frames of turn hold the result of
// tool call callID.
func (n *Notifier) callEnded(ctx context.Context, tenant, user, turn, callID string) (bool, error) {
	stored, err := n.store.FramesOfTurn(ctx, tenant, user, turn, turnFramesMax)
	if err != nil {
		return false, err
	}
	for _, f := range stored {
		var sf struct {
			Type string `json:"type"`
			Tool *struct {
				CallID string `json:"call_id"`
			} `json:"tool"`
		}
		if json.Unmarshal(f.Payload, &sf) == nil && sf.Type == contracts.FrameToolResult && sf.Tool != nil && sf.Tool.CallID == callID {
			return true, nil
		}
	}
	return false, nil
}

// withSeq is frame's JSON given its JSON as stored, without its seq:
// the stored bytes with the seq put where json.Marshal puts it, right
// after the type (the frame's first two fields), so the frame is not
// encoded a second time for each delivery. Bytes that do not begin as
// Marshal begins a frame are encoded again.
func withSeq(stored []byte, frame contracts.ServerFrame) ([]byte, error) {
	head := len(`{"type":"`) + len(frame.Type) + 1
	if frame.Seq <= 0 || len(stored) <= head || string(stored[:head]) != `{"type":"`+frame.Type+`"` || stored[head] != ',' {
		return json.Marshal(&frame)
	}
	out := make([]byte, 0, len(stored)+len(`,"seq":`)+20)
	out = append(out, stored[:head]...)
	out = append(out, `,"seq":`...)
	out = strconv.AppendInt(out, frame.Seq, 10)
	return append(out, stored[head:]...), nil
}

// publish sends frame, whose JSON is payload, to the user's sockets with
// purser's headers: the event's Purser-Created-At travels along so the
// ingress can measure delivery lag, and its correlation id and trace, so
// a turn stays one trace up to the socket.
func (n *Notifier) publish(ctx context.Context, event *message.Message, tenant, user string, frame contracts.ServerFrame, payload []byte) error {
	subject, err := bus.DeliverSubject(tenant, user)
	if err != nil {
		return bus.Permanent(err)
	}
	id := fmt.Sprintf("%s-%s-%d", tenant, user, frame.Seq)
	correlation := event.Metadata.Get(bus.HeaderCorrelation)
	if correlation == "" {
		correlation = frame.TurnID
	}
	out := bus.NewMessage(id, payload, bus.Headers{Type: frame.Type, Tenant: tenant, User: user, Conversation: frame.ConversationID,
		Correlation: correlation})
	if createdAt := event.Metadata.Get(bus.HeaderCreatedAt); createdAt != "" {
		out.Metadata.Set(bus.HeaderCreatedAt, createdAt)
	}
	out.SetContext(ctx)
	if err := n.pub.Publish(subject, out); err != nil {
		return fmt.Errorf("publish frame: %w", err)
	}
	n.frames.WithLabelValues(frame.Type).Inc()
	return nil
}

// decode is contracts.Decode with bad input marked permanent: a message
// that cannot be read will never become readable by retrying.
func decode(msg *message.Message, v any) error {
	if err := contracts.Decode(msg.Payload, v); err != nil {
		return bus.Permanent(fmt.Errorf("decode %s: %w", msg.Metadata.Get(bus.HeaderType), err))
	}
	return nil
}
