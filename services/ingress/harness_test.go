package ingress_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/coder/websocket"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/syncbuf"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/ingress"
	"github.com/purser-ai/purser/services/notifier"
)

// The tests run the ingress against a real NATS server with JetStream and
// the real notifier over SQLite; a scripted orchestrator answers turns.

var testSecret = []byte("0123456789abcdef0123456789abcdef-ingress")

const (
	issuer   = "purser"
	audience = "purser"
)

type harness struct {
	t        testing.TB
	ns       *server.Server
	nc       *nats.Conn // the test's own connection
	js       jetstream.JetStream
	srv      *httptest.Server
	reg      *prometheus.Registry
	logs     *syncbuf.Buffer
	store    *store.Store // the notifier's
	notifier *notifier.Notifier
	nnc      *nats.Conn // the notifier's connection
	respMu   sync.Mutex
	resp     *notifier.Responder
	inc      *nats.Conn // the ingress's connection
	// turns are the UserTurns the scripted orchestrator saw.
	turns chan contracts.UserTurn
	seq   int

	mu      sync.Mutex
	secrets []string // tokens minted here: no log line may hold one
	// once makes the scripted orchestrator answer each turn id once, as
	// the real one does (it skips a turn it has applied); done are the
	// turn ids it answered.
	once bool
	done map[string]bool
	// afterPublish, when set, runs on each turn the ingress published,
	// before its publish returns (so before a socket's ack).
	afterPublish func(t contracts.UserTurn, deliver func(frame []byte))
	in           *ingress.Ingress
}

type harnessOption func(*ingress.Config)

func newHarness(t testing.TB, opts ...harnessOption) *harness {
	t.Helper()
	ns, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := bus.Provision(ctx, js, bus.NotifierConsumers()...); err != nil {
		t.Fatalf("provision: %v", err)
	}
	h := &harness{t: t, ns: ns, nc: nc, js: js, reg: prometheus.NewRegistry(), logs: &syncbuf.Buffer{}, turns: make(chan contracts.UserTurn, 1024)}
	log := slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, ok := t.(*testing.B); ok {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	} else {
		h.forbid(string(testSecret))
		t.Cleanup(h.checkLogs) // registered first, so it runs after everything stopped
	}

	// The notifier: its router over AGENT and NOTIFY, and its responder.
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	h.store = st
	nnc := natstest.Connect(t, ns, "notifier")
	njs, err := jetstream.New(nnc)
	if err != nil {
		t.Fatal(err)
	}
	npub := bus.NewPublisher(nnc, njs)
	n := notifier.New(st, npub, h.reg, log, time.Now)
	resp, err := n.Respond(nnc)
	if err != nil {
		t.Fatal(err)
	}
	h.notifier, h.nnc, h.resp = n, nnc, resp
	t.Cleanup(func() {
		h.respMu.Lock()
		defer h.respMu.Unlock()
		if h.resp != nil {
			h.resp.Close()
		}
	})
	sub := bus.NewSubscriber(njs, "notifier", bus.NotifierConsumers(), log)
	router, err := bus.NewRouter("notifier", npub, log, bus.NewRouterMetrics(h.reg))
	if err != nil {
		t.Fatal(err)
	}
	n.Register(router, sub)
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- router.Run(rctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("notifier router: %v", err)
		}
		_ = sub.Close()
	})
	<-router.Running()

	// The scripted orchestrator.
	onc := natstest.Connect(t, ns, "orchestrator")
	ojs, err := jetstream.New(onc)
	if err != nil {
		t.Fatal(err)
	}
	opub := bus.NewPublisher(onc, ojs)
	// Its replies may still be publishing when a test has seen what it
	// waited for; the connection closes only after they finish.
	var (
		replyMu  sync.Mutex
		closing  bool
		inFlight sync.WaitGroup
	)
	if _, err := onc.Subscribe("purser.turns.>", func(m *nats.Msg) {
		replyMu.Lock()
		if closing {
			replyMu.Unlock()
			return
		}
		inFlight.Add(1)
		replyMu.Unlock()
		defer inFlight.Done()
		h.orchestrate(opub, m)
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		replyMu.Lock()
		closing = true
		replyMu.Unlock()
		inFlight.Wait()
	})
	if err := onc.Flush(); err != nil {
		t.Fatal(err)
	}

	// The ingress.
	cfg := ingress.Config{PingInterval: time.Hour}
	for _, o := range opts {
		o(&cfg)
	}
	verifier, err := auth.NewVerifier(auth.Config{Secret: testSecret, Issuer: issuer, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	inc := natstest.Connect(t, ns, "ingress")
	h.inc = inc
	ijs, err := jetstream.New(inc)
	if err != nil {
		t.Fatal(err)
	}
	in := ingress.New(cfg, verifier, inc, &hookedPublisher{Publisher: bus.NewPublisher(inc, ijs), h: h}, ingress.NewMetrics(h.reg), log, time.Now)
	h.mu.Lock()
	h.in = in
	h.mu.Unlock()
	mux := http.NewServeMux()
	in.Routes(mux)
	h.srv = httptest.NewServer(mux)
	t.Cleanup(func() { in.Close(); h.srv.Close() })
	return h
}

// onPublish has f run on each turn the ingress publishes, right after the
// publish and before the ingress goes on (a socket's ack waits), with a way
// to deliver a frame to the user's sockets at that moment.
func (h *harness) onPublish(f func(t contracts.UserTurn, deliver func(frame []byte))) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.afterPublish = f
}

// hookedPublisher is the ingress's publisher with the harness's
// afterPublish hook: the seam is the publisher a test passes in, so
// nothing of it ships.
type hookedPublisher struct {
	*bus.Publisher
	h *harness
}

func (p *hookedPublisher) Publish(topic string, msgs ...*message.Message) error {
	if err := p.Publisher.Publish(topic, msgs...); err != nil {
		return err
	}
	for _, m := range msgs {
		p.after(m)
	}
	return nil
}

func (p *hookedPublisher) PublishDedup(topic string, m *message.Message) (bool, error) {
	dup, err := p.Publisher.PublishDedup(topic, m)
	if err == nil {
		p.after(m)
	}
	return dup, err
}

func (p *hookedPublisher) after(m *message.Message) {
	p.h.mu.Lock()
	f, in := p.h.afterPublish, p.h.in
	p.h.mu.Unlock()
	var t contracts.UserTurn
	if f == nil || json.Unmarshal(m.Payload, &t) != nil {
		return
	}
	f(t, func(frame []byte) { in.DeliverLive(t.TenantID, t.UserID, frame) })
}

// orchestrate answers a turn by its text, as the orchestrator would:
// "clarify", "propose", "forbidden" and "silent" choose the outcome; a
// confirm is answered with the expense it added; anything else gets two
// tokens and an answer.
func (h *harness) orchestrate(pub *bus.Publisher, m *nats.Msg) {
	var t contracts.UserTurn
	if err := contracts.Decode(m.Data, &t); err != nil {
		h.t.Errorf("orchestrator got a bad turn: %v", err)
		return
	}
	select {
	case h.turns <- t:
	default:
	}
	h.mu.Lock()
	repeat := h.once && h.done[t.TurnID]
	if h.done == nil {
		h.done = map[string]bool{}
	}
	h.done[t.TurnID] = true
	h.mu.Unlock()
	if repeat {
		return
	}
	expense := &contracts.ExpenseView{ID: 7, Item: "coffee", Amount: contracts.Money{Minor: 350, Currency: "EUR"}, Date: "2026-11-22"}
	switch {
	case t.Confirm != nil:
		h.agent(pub, t, contracts.TypeAnswer, contracts.Answer{TurnID: t.TurnID, Content: "Added coffee.", Added: expense})
	case strings.HasPrefix(t.Text, "silent"):
	case strings.HasPrefix(t.Text, "clarify"):
		h.agent(pub, t, contracts.TypeClarify, contracts.Clarify{TurnID: t.TurnID, Question: "Which account?"})
	case strings.HasPrefix(t.Text, "propose"):
		h.agent(pub, t, contracts.TypeProposal, contracts.Proposal{ProposalID: "p-" + t.TurnID[:20], TurnID: t.TurnID, Tool: "add_expense",
			Args: json.RawMessage(`{"item":"coffee","amount":"3.50"}`), Summary: "Add coffee, 3.50 EUR", ExpiresAt: time.Now().Add(time.Hour).UTC()})
	case strings.HasPrefix(t.Text, "limited"):
		h.agent(pub, t, contracts.TypeTurnError, contracts.TurnError{TurnID: t.TurnID, Code: contracts.CodeLimit,
			Message: "I couldn't finish that: Too many list_expenses calls; try again in 17 seconds.", RetryAfter: 17})
	case strings.HasPrefix(t.Text, "forbidden"):
		h.agent(pub, t, contracts.TypeTurnError, contracts.TurnError{TurnID: t.TurnID, Code: contracts.CodeForbidden, Message: "Viewers cannot change expenses."})
	default:
		subject, _ := bus.DeliverSubject(t.TenantID, t.UserID)
		for i, piece := range []string{"All ", "good."} {
			b, _ := json.Marshal(contracts.ServerFrame{Type: contracts.FrameToken, ConversationID: t.ConversationID, TurnID: t.TurnID,
				At: time.Now().UTC(), Token: &contracts.TokenBody{Text: piece, Index: i}})
			_ = h.nc.Publish(subject, b)
		}
		h.agent(pub, t, contracts.TypeAnswer, contracts.Answer{TurnID: t.TurnID, Content: "All good.", Listed: []contracts.ExpenseView{*expense}})
	}
}

func (h *harness) agent(pub *bus.Publisher, t contracts.UserTurn, typ string, payload any) {
	b, err := json.Marshal(payload)
	if err != nil {
		h.t.Errorf("encode %s: %v", typ, err)
		return
	}
	h.publishAgent(pub, t.TenantID, t.UserID, t.ConversationID, t.TurnID+"-"+typ, typ, t.TurnID, b)
}

func (h *harness) publishAgent(pub *bus.Publisher, tenant, user, conv, id, typ, correlation string, payload []byte) {
	subject, err := bus.AgentSubject(tenant, user, conv)
	if err != nil {
		h.t.Errorf("agent subject: %v", err)
		return
	}
	msg := bus.NewMessage(id, payload, bus.Headers{Type: typ, Tenant: tenant, User: user, Conversation: conv, Correlation: correlation})
	msg.Metadata.Set(bus.HeaderCreatedAt, time.Now().UTC().Format(time.RFC3339Nano))
	if err := pub.Publish(subject, msg); err != nil {
		h.t.Errorf("publish %s: %v", typ, err)
	}
}

// answer publishes an Answer event for user to AGENT, as the orchestrator
// would, and returns its text.
func (h *harness) answer(tenant, user, conv string) string {
	h.t.Helper()
	h.seq++
	turn := fmt.Sprintf("t%d", h.seq)
	text := fmt.Sprintf("answer %d", h.seq)
	b, _ := json.Marshal(contracts.Answer{TurnID: turn, Content: text})
	h.publishAgent(bus.NewPublisher(h.nc, h.js), tenant, user, conv, "ev-"+turn, contracts.TypeAnswer, turn, b)
	return text
}

// notify publishes a Notification for user to NOTIFY.
func (h *harness) notify(tenant, user, id, title string) {
	h.t.Helper()
	b, _ := json.Marshal(contracts.Notification{ID: id, Kind: "info", Title: title, CreatedAt: time.Now().UTC()})
	subject, _ := bus.NotifySubject(tenant, user)
	msg := bus.NewMessage("n-"+id, b, bus.Headers{Type: contracts.TypeNotification, Tenant: tenant, User: user, Correlation: id})
	if err := bus.NewPublisher(h.nc, h.js).Publish(subject, msg); err != nil {
		h.t.Fatalf("publish notification: %v", err)
	}
}

func (h *harness) token(tenant, user string) string {
	h.t.Helper()
	tok, err := auth.NewMinter(testSecret, issuer, audience, nil).Mint(tenant, user, []auth.Role{auth.RoleMember}, time.Hour)
	if err != nil {
		h.t.Fatal(err)
	}
	h.forbid(tok)
	return tok
}

// forbid adds secrets that must appear in no log line.
func (h *harness) forbid(secrets ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.secrets = append(h.secrets, secrets...)
}

// checkLogs fails the test for any log line holding a token or the secret.
func (h *harness) checkLogs() {
	h.mu.Lock()
	defer h.mu.Unlock()
	text := h.logs.String()
	if !strings.Contains(text, "level=DEBUG") {
		h.t.Errorf("the services logged nothing at debug level; the log check would prove nothing")
	}
	for _, line := range strings.Split(text, "\n") {
		for _, s := range h.secrets {
			if s != "" && strings.Contains(line, s) {
				h.t.Errorf("a log line holds a secret (starting %q): %.200s", s[:min(4, len(s))], line)
			}
		}
	}
}

func (h *harness) wsURL() string { return "ws" + strings.TrimPrefix(h.srv.URL, "http") + "/v1/ws" }

type wsClient struct {
	t    testing.TB
	conn *websocket.Conn
}

// dial opens a socket with token and sends a ping first, which ends the
// server's resume window, unless noPing.
func (h *harness) dial(token string) *wsClient {
	h.t.Helper()
	c := h.dialRaw(token)
	c.send(`{"type":"ping"}`)
	c.next(contracts.FramePong)
	return c
}

func (h *harness) dialRaw(token string) *wsClient {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": []string{"Bearer " + token}},
		Subprotocols: []string{auth.Subprotocol},
	})
	if err != nil {
		h.t.Fatalf("dial: %v", err)
	}
	conn.SetReadLimit(-1)
	h.t.Cleanup(func() { conn.CloseNow() })
	return &wsClient{t: h.t, conn: conn}
}

func (c *wsClient) send(frame string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read returns the next frame, failing after 20 s.
func (c *wsClient) read() contracts.ServerFrame {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, data, err := c.conn.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var f contracts.ServerFrame
	if err := json.Unmarshal(data, &f); err != nil {
		c.t.Fatalf("bad frame %q: %v", data, err)
	}
	return f
}

// next reads until a frame of type typ, skipping tokens and acks.
func (c *wsClient) next(typ string) contracts.ServerFrame {
	c.t.Helper()
	for {
		f := c.read()
		if f.Type == typ {
			return f
		}
		// A user's own message comes back as a user_message frame (for
		// their other devices); tests that look for it ask for it.
		if f.Type != contracts.FrameToken && f.Type != contracts.FrameAck && f.Type != contracts.FrameUserMessage {
			c.t.Fatalf("got %s frame %+v while waiting for %s", f.Type, f, typ)
		}
	}
}

// closeStatus reads until the socket closes and returns its status.
func (c *wsClient) closeStatus() websocket.StatusCode {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, _, err := c.conn.Read(ctx); err != nil {
			return websocket.CloseStatus(err)
		}
	}
}

// metric returns the value of the counter or gauge name with labels.
func (h *harness) metric(name string, labels ...string) float64 {
	h.t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		h.t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			switch {
			case m.GetCounter() != nil:
				return m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				return m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

// eventually polls f until it is true, failing after 20 s.
func eventually(t testing.TB, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
