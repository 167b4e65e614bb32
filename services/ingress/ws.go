package ingress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

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
	if !in.originAllowed(r) {
		in.metrics.authFailures.WithLabelValues("origin").Inc()
		writeJSONError(w, http.StatusForbidden, "forbidden", "connections from this origin are not allowed")
		return
	}
	if in.hub.sockets(userKey{principal.TenantID, principal.UserID}) >= in.cfg.MaxSocketsPerUser {
		in.metrics.rateLimited.Inc()
		w.Header().Set("Retry-After", "10")
		writeJSONError(w, http.StatusTooManyRequests, "too_many_sockets", fmt.Sprintf("at most %d open connections per user; close one first", in.cfg.MaxSocketsPerUser))
		return
	}
	lh := &leanHijacker{ResponseWriter: w}
	conn, err := websocket.Accept(lh, r, &websocket.AcceptOptions{
		Subprotocols: []string{auth.Subprotocol},
		// originAllowed has checked the origin, scheme included, which
		// the library's own check leaves out.
		InsecureSkipVerify: true,
	})
	if err != nil {
		return // Accept has answered the request.
	}
	conn.SetReadLimit(in.cfg.MaxFrameBytes)

	// The socket outlives this request: its reader goroutine is all that
	// stays while it is idle.
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{
		queue:  fifo[*outFrame]{compactAfter: 64},
		ctx:    ctx,
		cancel: cancel,
		in:     in,
		conn:   conn,
		sender: senderOf(principal),
		born:   time.Now(),
		lean:   lh.conn,
		done:   make(chan struct{}),
		order:  newSequencer(in.cfg.ResumeWindow > 0, in.cfg.SendQueue),
	}
	if err := in.hub.add(c, in.cfg.MaxSocketsPerUser); err != nil {
		cancel()
		switch {
		case errors.Is(err, errTooManySockets):
			_ = conn.Close(websocket.StatusPolicyViolation, "too many open connections for this user")
		case errors.Is(err, errClosing):
			_ = conn.Close(websocket.StatusServiceRestart, restartReason)
		default:
			_ = conn.Close(websocket.StatusInternalError, "unavailable")
		}
		return
	}
	in.log.Debug("socket open", "tenant", c.tenant, "user", c.user)
	go c.serve(principal.ExpiresAt)
}

// serve reads the client's frames until the socket closes, then waits for
// its close frame to be written and forgets the socket. Its goroutine is
// the only one an idle socket has: the writer runs while frames are
// queued, and timers stand in for the rest.
func (c *client) serve(expiresAt time.Time) {
	in := c.in
	defer c.cancel()
	stopWatch := c.watch(expiresAt)
	c.readLoop(c.ctx)
	c.closeWith(websocket.StatusNormalClosure, "")
	c.cancel()
	stopWatch()
	c.closing.Wait()
	in.hub.remove(c)
	in.log.Debug("socket closed", "tenant", c.tenant, "user", c.user, "code", int(c.closeCode))
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
	in.log.Info("authentication refused", "reason", reason, "path", r.URL.Path, "remote", r.RemoteAddr)
	status := http.StatusUnauthorized
	if errors.Is(err, auth.ErrUnavailable) {
		status = http.StatusServiceUnavailable
	}
	writeJSONError(w, status, "unauthorized", "authentication failed: "+reason)
	return auth.Principal{}, false
}

// client is one websocket. Its frames wait in queue for one writer
// goroutine, which runs only while the queue holds frames, so a slow socket
// never blocks delivery to others and an idle one costs no writer; their
// order is kept by order (order.go).
type client struct {
	sender
	in     *Ingress
	conn   *websocket.Conn
	ctx    context.Context // the socket's; gap fills run under it
	cancel context.CancelFunc

	// qmu guards the send queue, at most SendQueue frames, and whether a
	// writer goroutine runs.
	qmu     sync.Mutex
	queue   fifo[*outFrame]
	writing bool
	// room gets a signal when a frame leaves the queue, for a catch-up
	// waiting for room; made by the first one that waits.
	room chan struct{}

	// lastConversation is the conversation of the latest message frame;
	// a confirm without a conversation id belongs to it. Reader-owned.
	lastConversation string

	// flushMu serializes what may queue held or replayed frames: a
	// catch-up, and the end of the initial hold.
	flushMu sync.Mutex
	mu      sync.Mutex // guards order
	order   sequencer

	closeOnce   sync.Once
	done        chan struct{}
	closeCode   websocket.StatusCode // set once, before done closes
	closeReason string
	// closing waits for the close frame to be written.
	closing sync.WaitGroup

	// born is when the socket opened; lastFrame, the time since then of
	// the latest client frame (for the idle timeout).
	born      time.Time
	lastFrame atomic.Int64
	// lean is the connection under the library, nil if it could not be
	// hijacked as one.
	lean *leanConn
}

// readLoop reads client frames until the socket closes. A socket silent
// for IdleTimeout (not even a ping) is closed with 1001 and a reason.
func (c *client) readLoop(ctx context.Context) {
	if c.lean == nil {
		for c.readOne(ctx) {
		}
		return
	}
	// The socket's goroutine only waits for input, and each frame is read
	// and handled on a goroutine of its own: reading and handling a frame
	// grows a stack to 4 KiB or more, which the waiting goroutine would
	// otherwise keep until a collection shrank it, on every socket that
	// ever sent a frame (BenchmarkIdleConnections/pinged).
	var more chan bool // made at the first frame: a silent socket has none
	for {
		c.lean.awaitInput()
		if more == nil {
			more = make(chan bool, 1)
		}
		go func() { more <- c.readOne(ctx) }()
		if !<-more {
			return
		}
	}
}

// readOne reads one frame and handles it; false once the socket is closed.
// Closing the connection ends the read: it needs no context of its own
// (one would cost every idle socket a registration).
func (c *client) readOne(ctx context.Context) bool {
	typ, data, err := c.conn.Read(context.Background())
	if err != nil {
		return false
	}
	if c.lean != nil && typ == websocket.MessageBinary && len(data) == 0 && c.lean.takeSynthetic() {
		return true // made up after a pong, to wait in awaitInput
	}
	c.lastFrame.Store(int64(time.Since(c.born)))
	if typ != websocket.MessageText {
		c.sendError("", contracts.ErrCodeBadFrame, "frames must be JSON text")
		return true
	}
	c.handle(ctx, data)
	return true
}

// frameID is the id a frame that could not be read says it has, when it
// says one that is a valid id, so that the client knows which of its
// frames was refused and does not send it again; else "".
func frameID(data []byte) string {
	var f struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(data, &f) != nil || !contracts.ValidID(f.ID) {
		return ""
	}
	return f.ID
}

func (c *client) handle(ctx context.Context, data []byte) {
	f, err := contracts.DecodeClientFrame(data)
	if err != nil || f.Resume == nil {
		// The first frame of any type but resume ends the initial hold; a
		// resume takes it over.
		c.endInitialHold()
	}
	if err != nil {
		c.in.metrics.framesIn.WithLabelValues("invalid").Inc()
		c.sendError(frameID(data), contracts.ErrCodeBadFrame, err.Error())
		return
	}
	switch {
	case f.Ping != nil:
		c.in.metrics.framesIn.WithLabelValues(contracts.FramePing).Inc()
		c.sendFrame(contracts.ServerFrame{Type: contracts.FramePong, At: c.in.now()})
	case f.Resume != nil:
		c.in.metrics.framesIn.WithLabelValues(contracts.FrameResume).Inc()
		c.resume(ctx, f.Resume.AfterSeq)
	case f.Conversations != nil:
		c.in.metrics.framesIn.WithLabelValues(contracts.FrameConversations).Inc()
		c.conversations(ctx, f.Conversations)
	case f.Message != nil:
		c.in.metrics.framesIn.WithLabelValues(contracts.FrameMessage).Inc()
		m := f.Message
		if !c.allow(m.ID) {
			return
		}
		c.lastConversation = m.ConversationID
		t := c.in.newTurn(c.sender, turnInput{ConversationID: m.ConversationID, ClientID: m.ID, Text: m.Text, Timezone: m.Timezone, Locale: m.Locale})
		c.submit(ctx, m.ID, t)
	case f.Confirm != nil:
		c.in.metrics.framesIn.WithLabelValues(contracts.FrameConfirm).Inc()
		cf := f.Confirm
		if !c.allow(cf.ID) {
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
		t := c.in.newTurn(c.sender, turnInput{ConversationID: conv, ClientID: cf.ID,
			Confirm: &contracts.Confirm{ProposalID: cf.ProposalID, ProposalIDs: cf.ProposalIDs, Decision: cf.Decision, Args: cf.Args}})
		c.submit(ctx, cf.ID, t)
	}
}

func (c *client) allow(id string) bool {
	if c.in.limits.allow(userKey{c.tenant, c.user}, c.in.now()) {
		return true
	}
	c.in.metrics.rateLimited.Inc()
	c.sendError(id, contracts.ErrCodeRateLimited, "too many messages; wait a moment and try again")
	return false
}

func (c *client) submit(ctx context.Context, clientID string, t contracts.UserTurn) {
	// The ack takes its place in the socket's queue before the turn is
	// published: whatever the turn produces (its tokens, its outcome, even
	// from a notifier quicker than this goroutine) is queued behind it, so
	// a client always learns the turn id before it sees the turn's frames.
	slot := &outFrame{typ: contracts.FrameAck, ready: make(chan struct{})}
	c.enqueue(slot)
	filled := false
	fill := func(f contracts.ServerFrame) {
		if b, err := json.Marshal(&f); err == nil {
			slot.data, slot.typ = b, f.Type
		}
		filled = true
		close(slot.ready)
	}
	defer func() {
		if !filled {
			close(slot.ready) // nothing to say: the writer skips the slot
		}
	}()
	seen, earlier, err := c.in.seenBefore(ctx, t, clientID)
	if verr := (*contracts.ValidationError)(nil); errors.As(err, &verr) {
		fill(errorFrame(clientID, contracts.ErrCodeBadFrame, verr.Error(), c.in.now()))
		return
	}
	if err != nil {
		fill(errorFrame(clientID, contracts.ErrCodeUnavailable, msgNotQueued, c.in.now()))
		return
	}
	repeated, err := c.in.publishTurn(ctx, t)
	if err != nil {
		c.in.log.Error("publish turn", "err", err, "tenant", t.TenantID, "turn", t.TurnID)
		fill(errorFrame(clientID, contracts.ErrCodeUnavailable, msgNotQueued, c.in.now()))
		return
	}
	ack := contracts.ServerFrame{Type: contracts.FrameAck, ConversationID: t.ConversationID, TurnID: t.TurnID, At: c.in.now()}
	if clientID != "" {
		ack.Ack = &contracts.AckBody{ID: clientID}
	}
	fill(ack)
	// A reused id (or a decision made before, which has no id of its own)
	// is the same turn: answer with what it already produced. A turn still
	// running answers live, as usual.
	if repeated || seen {
		frames := earlier
		if frames == nil {
			var err error
			if frames, _, err = c.in.storedOutcome(ctx, t); err != nil {
				c.in.log.Warn("repeated turn: stored outcome", "tenant", t.TenantID, "turn", t.TurnID, "err", err)
				return
			}
		}
		for _, f := range frames {
			f.again = true
			c.deliver(f)
		}
	}
}

func errorFrame(id, code, msg string, at time.Time) contracts.ServerFrame {
	return contracts.ServerFrame{Type: contracts.FrameError, At: at, Error: &contracts.ErrorBody{Code: code, Message: msg, ID: id}}
}

func (c *client) sendError(id, code, msg string) {
	c.sendFrame(errorFrame(id, code, msg, c.in.now()))
}

// sendFrame queues a reply of this socket's own (ack, pong, error): it is
// never held back.
func (c *client) sendFrame(f contracts.ServerFrame) {
	b, err := json.Marshal(&f)
	if err != nil {
		return
	}
	c.enqueue(&outFrame{data: b, typ: f.Type, seq: f.Seq})
}

// enqueue never blocks: a socket whose queue is full is closed with 1008 and
// its client resumes from the last seq it saw, so memory per socket stays
// bounded whatever the client's speed.
func (c *client) enqueue(f *outFrame) {
	c.qmu.Lock()
	switch {
	case c.isDone():
		c.qmu.Unlock()
	case c.queue.len() >= c.in.cfg.SendQueue:
		c.qmu.Unlock()
		c.overflow()
	default:
		c.push(f)
		c.qmu.Unlock()
	}
}

// enqueueWait queues a replayed frame, waiting for room: catch-up is paced
// by the client, not dropped. Catch-ups take turns (flushMu), so one
// waits at a time.
func (c *client) enqueueWait(f *outFrame) bool {
	for {
		c.qmu.Lock()
		if c.isDone() {
			c.qmu.Unlock()
			return false
		}
		if c.queue.len() < c.in.cfg.SendQueue {
			c.push(f)
			c.qmu.Unlock()
			return true
		}
		if c.room == nil {
			c.room = make(chan struct{}, 1)
		}
		room := c.room
		c.qmu.Unlock()
		select {
		case <-c.done:
			return false
		case <-room:
		}
	}
}

// push queues f and starts the writer if none runs. The caller holds qmu.
func (c *client) push(f *outFrame) {
	c.queue.push(f)
	if !c.writing {
		c.writing = true
		go c.writeLoop()
	}
}

// next takes the oldest queued frame; nil when none is left or the socket
// is done, and then the writer is to return: it is no longer counted as
// running, and the queue's memory goes back.
func (c *client) next() *outFrame {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	f, ok := c.queue.pop()
	if !ok || c.isDone() {
		c.queue.reset()
		c.writing = false
		return nil
	}
	select {
	case c.room <- struct{}{}:
	default:
	}
	return f
}

func (c *client) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *client) overflow() {
	c.in.metrics.queueDrops.Inc()
	c.closeWith(websocket.StatusPolicyViolation, "too slow: reconnect and resume")
}

// nextReady reports whether the oldest queued frame can be written at
// once: it has its content, and it has something to say.
func (c *client) nextReady() bool {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	f, ok := c.queue.peek()
	if !ok {
		return false
	}
	if f.ready != nil {
		select {
		case <-f.ready:
		default:
			return false
		}
	}
	return f.data != nil
}

// writeLoop writes queued frames in order until the queue is empty or the
// socket is done; enqueue starts it again with the next frame. Frames
// queued together go out in one write: while the frame after the one
// being written is ready, the connection holds this one for it (about a
// quarter of a bench turn's frames: an ack with the person's message
// behind it, a tool's start behind its turn's ack).
func (c *client) writeLoop() {
	defer func() { _ = c.lean.release() }()
	for f := c.next(); f != nil; f = c.next() {
		if f.ready != nil { // a reply whose content is still being decided
			select {
			case <-f.ready:
			case <-c.done:
				continue // next ends the loop
			}
			if f.data == nil {
				continue
			}
		}
		c.lean.holdFrames(c.nextReady())
		if err := c.write(f.data); err != nil {
			c.closeWith(websocket.StatusGoingAway, "write failed")
			continue
		}
		c.in.metrics.wrote(f, c.in.now())
	}
}

// write writes one frame, within leanWriteTimeout. On a leanConn the
// connection's deadline bounds it, and the library is given a context
// that never ends (and is not made anew for each frame): with one that
// can end, it arms a timer for every write.
func (c *client) write(data []byte) error {
	if c.lean != nil {
		return c.conn.Write(context.Background(), websocket.MessageText, data)
	}
	wctx, cancel := context.WithTimeout(c.ctx, leanWriteTimeout)
	defer cancel()
	return c.conn.Write(wctx, websocket.MessageText, data)
}

// watch keeps the socket's deadlines with one timer, and no goroutine
// between them: the end of the initial hold; a ping every PingInterval, whose pong must come back within
// the interval ("no pong"); no client frame for IdleTimeout ("idle
// timeout"); the token's expiry, when it has one. The returned stop waits
// for a ping or a release of held frames in flight.
func (c *client) watch(expiresAt time.Time) (stop func()) {
	w := &watchdog{c: c, nextPing: c.born.Add(c.in.cfg.PingInterval)}
	if c.in.cfg.ResumeWindow > 0 {
		// The initial hold ends at the first client frame, or here.
		w.holdUntil = c.born.Add(c.in.cfg.ResumeWindow)
	}
	if !expiresAt.IsZero() {
		w.expires = c.born.Add(expiresAt.Sub(c.in.now()))
	}
	w.mu.Lock()
	w.t = time.AfterFunc(w.next(c.born), w.tick)
	w.mu.Unlock()
	return w.stop
}

type watchdog struct {
	c        *client
	mu       sync.Mutex
	t        *time.Timer
	stopped  bool
	inFlight sync.WaitGroup
	nextPing time.Time
	expires  time.Time // zero: never
	// holdUntil is when the initial hold ends at the latest; zero once
	// it has.
	holdUntil time.Time
}

// idleAt is when the socket times out unless a frame comes first.
func (w *watchdog) idleAt() time.Time {
	return w.c.born.Add(time.Duration(w.c.lastFrame.Load()) + w.c.in.cfg.IdleTimeout)
}

// next is how long until the nearest deadline. The caller holds mu.
func (w *watchdog) next(now time.Time) time.Duration {
	at := min(w.nextPing.Sub(now), w.idleAt().Sub(now))
	if !w.expires.IsZero() {
		at = min(at, w.expires.Sub(now))
	}
	if !w.holdUntil.IsZero() {
		at = min(at, w.holdUntil.Sub(now))
	}
	return max(at, 0)
}

func (w *watchdog) tick() {
	c := w.c
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	now := time.Now()
	if !w.holdUntil.IsZero() && !now.Before(w.holdUntil) {
		w.holdUntil = time.Time{}
		w.inFlight.Add(1)
		w.mu.Unlock()
		c.endInitialHold()
		w.inFlight.Done()
		w.mu.Lock()
		if w.stopped {
			w.mu.Unlock()
			return
		}
	}
	switch {
	case !w.expires.IsZero() && !now.Before(w.expires):
		w.mu.Unlock()
		c.closeWith(StatusTokenExpired, "token expired")
		return
	case !now.Before(w.idleAt()):
		w.mu.Unlock()
		c.closeWith(websocket.StatusGoingAway, "idle timeout")
		return
	}
	ping := !now.Before(w.nextPing)
	if ping {
		w.inFlight.Add(1)
	}
	w.mu.Unlock()
	if ping {
		interval := c.in.cfg.PingInterval
		pctx, cancel := context.WithTimeout(c.ctx, interval)
		err := c.conn.Ping(pctx)
		cancel()
		w.inFlight.Done()
		if err != nil {
			c.closeWith(websocket.StatusGoingAway, "no pong")
			return
		}
		w.mu.Lock()
		w.nextPing = time.Now().Add(interval)
		w.mu.Unlock()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.t.Reset(w.next(time.Now()))
	}
}

func (w *watchdog) stop() {
	w.mu.Lock()
	w.stopped = true
	w.t.Stop()
	w.mu.Unlock()
	w.inFlight.Wait()
}

func (c *client) closeWith(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		c.closeCode, c.closeReason = code, reason
		close(c.done)
		// The close frame goes out after a frame being written, if any.
		c.closing.Add(1)
		go func() {
			defer c.closing.Done()
			_ = c.conn.Close(code, reason)
		}()
	})
}

// restartReason goes with 1012 (Service Restart) when a replica stops:
// the client reconnects at once, lands on another replica, and resumes.
const restartReason = "server restarting: reconnect and resume"

func (c *client) shutdown() { c.closeWith(websocket.StatusServiceRestart, restartReason) }
