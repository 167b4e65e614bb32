package ingress

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

// StatusTokenExpired closes a socket whose token ran out; the client
// reconnects with a fresh token and resumes.
const StatusTokenExpired websocket.StatusCode = 4001

// serveWS authenticates before the upgrade: a request without a valid token
// never becomes a websocket.
func (in *Ingress) serveWS(w http.ResponseWriter, r *http.Request) {
	principal, ok := in.authenticate(w, r)
	if !ok {
		return
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols:   []string{auth.Subprotocol},
		OriginPatterns: in.cfg.AllowedOrigins,
	})
	if err != nil {
		in.metrics.authFailures.WithLabelValues("origin").Inc()
		return // Accept has answered the request.
	}
	conn.SetReadLimit(in.cfg.MaxFrameBytes)

	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	c := &client{
		in:     in,
		conn:   conn,
		tenant: principal.TenantID,
		user:   principal.UserID,
		roles:  rolesOf(principal),
		send:   make(chan []byte, in.cfg.SendQueue),
		done:   make(chan struct{}),
	}
	limiter, err := in.hub.add(c)
	if err != nil {
		_ = conn.Close(websocket.StatusInternalError, "unavailable")
		return
	}
	defer in.hub.remove(c)

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); c.writeLoop(ctx) }()
	go func() { defer wg.Done(); c.pingLoop(ctx) }()
	go func() {
		defer wg.Done()
		<-c.done
		_ = conn.Close(c.closeCode, c.closeReason)
	}()
	if !principal.ExpiresAt.IsZero() {
		t := time.AfterFunc(principal.ExpiresAt.Sub(in.now()), func() { c.closeWith(StatusTokenExpired, "token expired") })
		defer t.Stop()
	}
	c.readLoop(ctx, limiter)
	c.closeWith(websocket.StatusNormalClosure, "")
	cancel()
	wg.Wait()
}

// authenticate answers 401 itself when the request carries no valid token.
func (in *Ingress) authenticate(w http.ResponseWriter, r *http.Request) (auth.Principal, bool) {
	token, _, err := auth.TokenFromRequest(r)
	if err == nil {
		var p auth.Principal
		p, err = in.verifier.Verify(r.Context(), token)
		if err == nil {
			return p, true
		}
	}
	reason := auth.Reason(err)
	in.metrics.authFailures.WithLabelValues(reason).Inc()
	status := http.StatusUnauthorized
	if errors.Is(err, auth.ErrUnavailable) {
		status = http.StatusServiceUnavailable
	}
	writeJSONError(w, status, "unauthorized", "authentication failed: "+reason)
	return auth.Principal{}, false
}

// client is one websocket. Its frames go out through send, written by one
// goroutine, so a slow socket never blocks delivery to others.
type client struct {
	in     *Ingress
	conn   *websocket.Conn
	tenant string
	user   string
	roles  []string
	send   chan []byte

	// lastConversation is the conversation of the latest message frame;
	// a confirm without a conversation id belongs to it. Reader-owned.
	lastConversation string

	closeOnce   sync.Once
	done        chan struct{}
	closeCode   websocket.StatusCode // set once, before done closes
	closeReason string
}

func (c *client) readLoop(ctx context.Context, limiter *rate.Limiter) {
	for {
		readCtx, cancel := context.WithTimeout(ctx, c.in.cfg.IdleTimeout)
		typ, data, err := c.conn.Read(readCtx)
		cancel()
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			c.sendError("", contracts.ErrCodeBadFrame, "frames must be JSON text")
			continue
		}
		c.handle(ctx, data, limiter)
	}
}

func (c *client) handle(ctx context.Context, data []byte, limiter *rate.Limiter) {
	f, err := contracts.DecodeClientFrame(data)
	if err != nil {
		c.in.metrics.framesIn.WithLabelValues("invalid").Inc()
		c.sendError("", contracts.ErrCodeBadFrame, err.Error())
		return
	}
	switch {
	case f.Ping != nil:
		c.in.metrics.framesIn.WithLabelValues(contracts.FramePing).Inc()
		c.sendFrame(contracts.ServerFrame{Type: contracts.FramePong, At: c.in.now()})
	case f.Resume != nil:
		c.in.metrics.framesIn.WithLabelValues(contracts.FrameResume).Inc()
		c.sendError("", contracts.ErrCodeUnavailable, "resume is not available on this server yet")
	case f.Message != nil:
		c.in.metrics.framesIn.WithLabelValues(contracts.FrameMessage).Inc()
		m := f.Message
		if !c.allow(limiter, m.ID) {
			return
		}
		c.lastConversation = m.ConversationID
		tz := m.Timezone
		if tz == "" {
			tz = c.in.cfg.DefaultTimezone
		}
		t := contracts.UserTurn{
			TurnID: turnID(c.tenant, c.user, m.ConversationID, m.ID), TenantID: c.tenant, UserID: c.user, Roles: c.roles,
			ConversationID: m.ConversationID, Text: m.Text, Timezone: tz, SentAt: c.in.now().UTC(),
		}
		c.submit(ctx, m.ID, t)
	case f.Confirm != nil:
		c.in.metrics.framesIn.WithLabelValues(contracts.FrameConfirm).Inc()
		cf := f.Confirm
		if !c.allow(limiter, cf.ID) {
			return
		}
		conv := cf.ConversationID
		if conv == "" {
			conv = c.lastConversation
		}
		if conv == "" {
			c.sendError(cf.ID, contracts.ErrCodeBadFrame, "conversation_id: is required before any message on this connection")
			return
		}
		// Without a client id, the decision itself is the identity: a
		// double-clicked approve is one turn.
		clientID := cf.ID
		if clientID == "" {
			clientID = "confirm-" + cf.ProposalID + "-" + cf.Decision
		}
		t := contracts.UserTurn{
			TurnID: turnID(c.tenant, c.user, conv, clientID), TenantID: c.tenant, UserID: c.user, Roles: c.roles,
			ConversationID: conv, Confirm: &contracts.Confirm{ProposalID: cf.ProposalID, Decision: cf.Decision, Args: cf.Args},
			Timezone: c.in.cfg.DefaultTimezone, SentAt: c.in.now().UTC(),
		}
		c.submit(ctx, cf.ID, t)
	}
}

func (c *client) allow(limiter *rate.Limiter, id string) bool {
	if limiter.Allow() {
		return true
	}
	c.in.metrics.rateLimited.Inc()
	c.sendError(id, contracts.ErrCodeRateLimited, "too many messages; wait a moment and try again")
	return false
}

func (c *client) submit(ctx context.Context, clientID string, t contracts.UserTurn) {
	if err := c.in.publishTurn(ctx, t); err != nil {
		var verr *contracts.ValidationError
		if errors.As(err, &verr) {
			c.sendError(clientID, contracts.ErrCodeBadFrame, verr.Error())
			return
		}
		c.in.log.Error("publish turn", "err", err, "tenant", t.TenantID, "turn", t.TurnID)
		c.sendError(clientID, contracts.ErrCodeUnavailable, "the message could not be queued; please retry")
		return
	}
	ack := contracts.ServerFrame{Type: contracts.FrameAck, ConversationID: t.ConversationID, TurnID: t.TurnID, At: c.in.now()}
	if clientID != "" {
		ack.Ack = &contracts.AckBody{ID: clientID}
	}
	c.sendFrame(ack)
}

func (c *client) sendError(id, code, msg string) {
	c.sendFrame(contracts.ServerFrame{Type: contracts.FrameError, At: c.in.now(), Error: &contracts.ErrorBody{Code: code, Message: msg, ID: id}})
}

func (c *client) sendFrame(f contracts.ServerFrame) {
	b, err := json.Marshal(f)
	if err != nil {
		return
	}
	c.enqueue(b)
}

// enqueue never blocks: a socket whose queue is full is closed with 1008 and
// its client resumes from the last seq it saw, so memory per socket stays
// bounded whatever the client's speed.
func (c *client) enqueue(frame []byte) {
	select {
	case <-c.done:
	case c.send <- frame:
	default:
		c.in.metrics.queueDrops.Inc()
		c.closeWith(websocket.StatusPolicyViolation, "too slow: reconnect and resume")
	}
}

func (c *client) writeLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			return
		case frame := <-c.send:
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := c.conn.Write(wctx, websocket.MessageText, frame)
			cancel()
			if err != nil {
				c.closeWith(websocket.StatusGoingAway, "write failed")
				return
			}
			c.in.metrics.framesOut.WithLabelValues(frameType(frame)).Inc()
		}
	}
}

func (c *client) pingLoop(ctx context.Context) {
	t := time.NewTicker(c.in.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			return
		case <-t.C:
			pctx, cancel := context.WithTimeout(ctx, c.in.cfg.PingInterval)
			err := c.conn.Ping(pctx)
			cancel()
			if err != nil {
				c.closeWith(websocket.StatusGoingAway, "no pong")
				return
			}
		}
	}
}

func (c *client) closeWith(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		c.closeCode, c.closeReason = code, reason
		close(c.done)
	})
}

func (c *client) shutdown() { c.closeWith(websocket.StatusGoingAway, "server shutting down") }

// frameType reads only the type of an encoded frame, for metrics.
func frameType(frame []byte) string {
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(frame, &head) != nil || head.Type == "" {
		return "unknown"
	}
	return head.Type
}

func writeJSONError(w http.ResponseWriter, status int, code, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Error  string `json:"error"`
		Detail string `json:"detail,omitempty"`
	}{code, detail})
}
