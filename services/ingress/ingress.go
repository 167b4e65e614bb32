// Package ingress is purser's front door: it authenticates clients, takes
// their websocket frames and HTTP requests, turns them into UserTurns on the
// TURNS stream, and relays each user's client frames from
// purser.deliver.<tenant>.<user> to that user's open sockets.
package ingress

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/tracing"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Verifier checks a bearer token.
type Verifier interface {
	Verify(ctx context.Context, token string) (auth.Principal, error)
}

// Config tunes the ingress. Zero values take the defaults noted.
type Config struct {
	// AllowedOrigins are host patterns (as in coder/websocket) a browser
	// page may connect from; the server's own host is always allowed.
	AllowedOrigins []string
	// MaxFrameBytes is the largest client frame; a larger one closes the
	// socket with 1009. Default 64 KiB.
	MaxFrameBytes int64
	// SendQueue is how many frames may wait for one slow socket before it
	// is closed (the client resumes from its last seq). Default 256.
	SendQueue int
	// IdleTimeout closes a socket that sent nothing, not even a ping,
	// for this long. Default 5 minutes.
	IdleTimeout time.Duration
	// PingInterval is how often the server pings. Default 30 s.
	PingInterval time.Duration
	// RatePerSecond and Burst limit the turns one user can send. Defaults 2 and 10.
	RatePerSecond float64
	Burst         int
	// DefaultTimezone is used when neither a frame nor the token names a
	// time zone. Default none: the user's own setting then applies (else
	// UTC), which the orchestrator knows.
	DefaultTimezone string
	// ResumeWindow is how long a new socket holds live frames back while
	// it may still send resume as its first frame, so that catch-up and
	// live frames reach it in order. The first frame of any type ends it.
	// Default 2 s; negative disables the hold.
	ResumeWindow time.Duration
	// RequestTimeout bounds one request to the notifier (a page of
	// catch-up, an inbox read). Default 5 s.
	RequestTimeout time.Duration
	// ChatTimeout bounds how long POST /v1/chat waits for the frame that
	// ends its turn. Default 60 s.
	ChatTimeout time.Duration
	// MaxChatBytes is the largest POST /v1/chat body. Default 1 MiB.
	MaxChatBytes int64
	// MaxSocketsPerUser is how many sockets one user may hold open on
	// this replica; one more is refused with 429. Default 16.
	MaxSocketsPerUser int
	// MaxUploadBytes is the largest file POST /v1/uploads takes; a larger
	// one gets 413. Default 20 MiB.
	MaxUploadBytes int64
	// MaxUploadPages is the most pages an uploaded PDF may have. Default 100.
	MaxUploadPages int
	// UploadsPerMinute and UploadBurst limit one user's uploads. Defaults 6 and 6.
	UploadsPerMinute float64
	UploadBurst      int
	// UploadTimeout bounds how long POST /v1/uploads waits for the turn
	// its file starts (reading a scan takes a while). Default 3 minutes.
	UploadTimeout time.Duration
}

func (c Config) withDefaults() Config {
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = 64 << 10
	}
	if c.SendQueue == 0 {
		c.SendQueue = 256
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = 5 * time.Minute
	}
	if c.PingInterval == 0 {
		c.PingInterval = 30 * time.Second
	}
	if c.RatePerSecond == 0 {
		c.RatePerSecond = 2
	}
	if c.Burst == 0 {
		c.Burst = 10
	}
	if c.ResumeWindow == 0 {
		c.ResumeWindow = 2 * time.Second
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = 5 * time.Second
	}
	if c.ChatTimeout == 0 {
		c.ChatTimeout = 60 * time.Second
	}
	if c.MaxSocketsPerUser == 0 {
		c.MaxSocketsPerUser = 16
	}
	if c.MaxChatBytes == 0 {
		c.MaxChatBytes = contracts.MaxMessageBytes
	}
	if c.MaxUploadBytes == 0 {
		c.MaxUploadBytes = 20 << 20
	}
	if c.MaxUploadPages == 0 {
		c.MaxUploadPages = 100
	}
	if c.UploadsPerMinute == 0 {
		c.UploadsPerMinute = 6
	}
	if c.UploadBurst == 0 {
		c.UploadBurst = 6
	}
	if c.UploadTimeout == 0 {
		c.UploadTimeout = 3 * time.Minute
	}
	return c
}

// Ingress serves /v1/ws, /v1/chat and /v1/notifications and relays
// deliveries. Create it with New; it owns no connection it was given. It
// keeps no state but its open connections: catch-up and the inbox are read
// from the notifier by request/reply.
type Ingress struct {
	cfg          Config
	verifier     Verifier
	nc           *nats.Conn
	pub          message.Publisher
	hub          *hub
	limits       *limits
	uploadLimits *limits
	uploads      UploadStore
	log          *slog.Logger
	metrics      *metrics
	now          func() time.Time
	newID        func() string
	tracer       tracing.Tracer
}

// New builds an ingress. nc subscribes to deliver subjects and asks the
// notifier for catch-up and the inbox; pub publishes UserTurns to JetStream.
func New(cfg Config, verifier Verifier, nc *nats.Conn, pub message.Publisher, m *Metrics, log *slog.Logger, now func() time.Time) *Ingress {
	cfg = cfg.withDefaults()
	in := &Ingress{cfg: cfg, verifier: verifier, nc: nc, pub: pub, log: log, metrics: m.m, now: now, newID: randomID}
	in.limits = newLimits(cfg.RatePerSecond, cfg.Burst)
	in.uploadLimits = newLimits(cfg.UploadsPerMinute/60, cfg.UploadBurst)
	in.hub = newHub(nc, log, m.m)
	if nc != nil {
		// Frames published while the connection was down are lost to
		// core NATS: every socket catches up from the store.
		prev := nc.Opts.ReconnectedCB
		nc.SetReconnectHandler(func(c *nats.Conn) {
			if prev != nil {
				prev(c)
			}
			in.hub.refillAll()
		})
		// Live frames the client library dropped (a slow consumer) are
		// caught up from the store the same way, for their user alone.
		prevErr := nc.Opts.AsyncErrorCB
		nc.SetErrorHandler(func(c *nats.Conn, s *nats.Subscription, err error) {
			if prevErr != nil {
				prevErr(c, s, err)
			}
			if s != nil && errors.Is(err, nats.ErrSlowConsumer) {
				in.hub.deliver.dropped(s.Subject)
			}
		})
	}
	return in
}

// Routes registers the client-facing endpoints on mux: the websocket, the
// HTTP API and the web chat page at /.
func (in *Ingress) Routes(mux *http.ServeMux) {
	mux.HandleFunc("/v1/ws", in.serveWS)
	mux.HandleFunc("/v1/chat", in.serveChat)
	mux.HandleFunc("/v1/uploads", in.serveUpload)
	mux.HandleFunc("/v1/notifications", in.serveNotifications)
	mux.HandleFunc("/v1/notifications/{id}/read", in.serveMarkRead)
	mux.HandleFunc("/v1/audit", in.serveAudit)
	mux.HandleFunc("/v1/conversations", in.serveConversations)
	mux.HandleFunc("/v1/conversations/{id}/frames", in.serveHistory)
	mux.HandleFunc("/v1/ledger", in.serveLedger)
	mux.HandleFunc("/v1/ledger/summary", in.serveLedgerSummary)
	mux.HandleFunc("/v1/settings", in.serveSettings)
	in.searchRoutes(mux)
	in.mailRoutes(mux)
	in.webRoutes(mux)
}

// randomID is a fresh client id for turns that come without one.
func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "h" + hex.EncodeToString(b[:])
}

// Close disconnects every socket, with 1012 (Service Restart: reconnect
// at once, to another replica, and resume), refuses new ones, and drops
// the deliver subscriptions. It does not wait for the sockets' close
// handshakes; Shutdown does.
func (in *Ingress) Close() { in.hub.closeAll() }

// Shutdown is Close, then waits until every socket's handler has ended
// (its close frame written, its subscription dropped) or ctx ends. Frames
// of turns still running reach their clients on the replica they resume
// on: the notifier stores every one.
func (in *Ingress) Shutdown(ctx context.Context) {
	in.hub.closeAll()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !in.hub.empty() {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// turnID derives a stable turn id from who sent what: a client that resends
// a frame with the same id produces the same turn, which JetStream's
// duplicate window and the orchestrator's applied-turn record both drop.
func turnID(tenant, user, conversation, clientID string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + user + "\x00" + conversation + "\x00" + clientID))
	return "t" + hex.EncodeToString(sum[:16])
}

// dedupPublisher is a publisher that can say when the stream dropped a
// publish as a repeat of an earlier one (bus.Publisher is one).
type dedupPublisher interface {
	PublishDedup(topic string, m *message.Message) (duplicate bool, err error)
}

// publishTurn publishes one turn, which seenBefore validated (once: the
// validator's reflection was 0.8% of the bytes purser allocated at 1,000
// bench users, per check). Repeated reports that the
// stream already had a turn of that id: the same message or confirm sent
// again.
func (in *Ingress) publishTurn(ctx context.Context, t contracts.UserTurn) (repeated bool, err error) {
	ctx, span := in.tracer.ReceiveTurn(ctx, t.TenantID, t.ConversationID, t.TurnID)
	defer func() { tracing.End(span, err, "") }()
	if err := in.busUp(); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, busTimeout)
	defer cancel()
	subject, err := bus.TurnSubject(t.TenantID, t.ConversationID)
	if err != nil {
		return false, err
	}
	payload, err := json.Marshal(&t)
	if err != nil {
		return false, fmt.Errorf("encode turn: %w", err)
	}
	msg := bus.NewMessage(t.TurnID, payload, bus.Headers{
		Type:         contracts.TypeUserTurn,
		Tenant:       t.TenantID,
		User:         t.UserID,
		Conversation: t.ConversationID,
		Correlation:  t.TurnID,
	})
	msg.SetContext(ctx)
	if dp, ok := in.pub.(dedupPublisher); ok {
		repeated, err = dp.PublishDedup(subject, msg)
	} else {
		err = in.pub.Publish(subject, msg)
	}
	if err != nil {
		return false, fmt.Errorf("publish turn: %w", err)
	}
	if !repeated {
		in.metrics.turns.Inc()
	}
	return repeated, nil
}

// busTimeout bounds each wait on the bus for a client's request (a
// publish, a subscription's flush), so that a client learns within
// seconds, not a minute, that the bus is down.
const busTimeout = 2 * time.Second

// errBusDown is returned at once while the ingress has no NATS connection.
var errBusDown = errors.New("the message bus is unavailable")

// busUp reports errBusDown unless the NATS connection is up.
func (in *Ingress) busUp() error {
	if in.nc != nil && !in.nc.IsConnected() {
		return errBusDown
	}
	return nil
}

// storedOutcome returns the stored frames of turn t (asked of the
// notifier) and the one that ended it, if it has ended: what a repeated
// message or confirm is answered with.
func (in *Ingress) storedOutcome(ctx context.Context, t contracts.UserTurn) (frames []*outFrame, end *outFrame, err error) {
	reply, err := ask(ctx, in, bus.NotifierTurnFrames(), t.TenantID, t.UserID, contracts.TurnFramesRequest{TurnID: t.TurnID})
	if err != nil {
		return nil, nil, err
	}
	for _, raw := range reply.Frames {
		f := newOutFrame(raw, "")
		frames = append(frames, f)
		if endsTurn(f.typ) {
			end = f
		}
	}
	return frames, end, nil
}

func rolesOf(p auth.Principal) []string {
	out := make([]string, len(p.Roles))
	for i, r := range p.Roles {
		out[i] = string(r)
	}
	return out
}
