// Package systest runs purser's back-end services for integration tests:
// a real nats-server, the real store (SQLite or Postgres), orchestrator and
// toolrunner replicas wired as in production, and a watcher of every
// subject. Tests drive it with UserTurns and ToolRequests on the bus and
// assert what crosses the bus and what the store holds.
package systest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/outbox"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
	"github.com/purser-ai/purser/services/orchestrator/offline"
	"github.com/purser-ai/purser/services/toolrunner"
)

// Options choose what runs.
type Options struct {
	DSN           string             // store; required
	Orchestrators int                // replicas; 0 runs none
	Toolrunners   int                // replicas; 0 runs none
	Tools         []toolrunner.Tool  // default toolrunner.Catalog()
	Model         orchestrator.Model // default offline.Model{}
	Orchestrator  orchestrator.Config
	// OrchestratorStore, when set, wraps the store each orchestrator uses
	// (to make it fail, say).
	OrchestratorStore func(orchestrator.Store) orchestrator.Store
	Mail              toolrunner.Mail   // adds the mail tools when set
	Parser            toolrunner.Parser // runs the statement importer when set
	Now               func() time.Time  // default time.Now
	Log               *slog.Logger      // default: discard
}

// System is a running set of services.
type System struct {
	T     testing.TB
	Srv   *server.Server
	NC    *nats.Conn
	JS    jetstream.JetStream
	Pub   *bus.Publisher
	Store *store.Store
	Reg   *prometheus.Registry
	opts  Options
	Bus   *Watch // every purser.> message since Start
}

// Start runs the system until the test ends.
func Start(t testing.TB, opts Options) *System {
	t.Helper()
	if opts.Model == nil {
		opts.Model = offline.Model{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.Tools == nil {
		opts.Tools = toolrunner.Catalog()
	}
	if opts.Mail != nil {
		var pv *toolrunner.Previewer
		if opts.Parser != nil {
			pv = &toolrunner.Previewer{Parser: opts.Parser}
		}
		opts.Tools = append(opts.Tools, toolrunner.MailTools(opts.Mail, pv)...)
	}
	srv, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s := &System{T: t, Srv: srv, NC: nc, JS: js, Pub: bus.NewPublisher(nc, js), Store: storetest.Open(t, opts.DSN),
		Reg: prometheus.NewRegistry(), opts: opts}
	s.Bus = s.Watch("purser.>")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := bus.Provision(ctx, js); err != nil {
		t.Fatalf("provision: %v", err)
	}
	for i := range opts.Orchestrators {
		s.startOrchestrator(i)
	}
	for i := range opts.Toolrunners {
		s.startToolrunner(i)
	}
	return s
}

// component starts one replica's router over its own connection.
func (s *System) component(service string, defs []bus.ConsumerDef, register func(pub message.Publisher, js jetstream.JetStream, r *message.Router, sub message.Subscriber, reg prometheus.Registerer) func(ctx context.Context)) {
	t := s.T
	nc := natstest.Connect(t, s.Srv, service)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := bus.Provision(ctx, js, defs...); err != nil {
		t.Fatalf("provision %s: %v", service, err)
	}
	pub := bus.NewPublisher(nc, js)
	reg := prometheus.NewRegistry()
	sub := bus.NewSubscriber(js, service, defs, s.opts.Log)
	r, err := bus.NewRouter(service, pub, s.opts.Log, bus.NewRouterMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	background := register(pub, js, r, sub, reg)
	rctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := r.Run(rctx); err != nil {
			t.Errorf("%s router: %v", service, err)
		}
	}()
	if background != nil {
		wg.Add(1)
		go func() { defer wg.Done(); background(rctx) }()
	}
	select {
	case <-r.Running():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start", service)
	}
	t.Cleanup(func() { stop(); wg.Wait(); _ = sub.Close() })
}

func (s *System) startOrchestrator(i int) {
	s.component(fmt.Sprintf("orchestrator-%d", i), bus.OrchestratorConsumers(),
		func(pub message.Publisher, _ jetstream.JetStream, r *message.Router, sub message.Subscriber, reg prometheus.Registerer) func(context.Context) {
			relay := outbox.NewRelay(s.Store, pub, s.opts.Log, s.opts.Now)
			var st orchestrator.Store = s.Store
			if s.opts.OrchestratorStore != nil {
				st = s.opts.OrchestratorStore(st)
			}
			o := orchestrator.New(s.opts.Orchestrator, st, relay, pub, s.opts.Model, reg, s.opts.Log, s.opts.Now)
			o.Register(r, sub)
			return func(ctx context.Context) {
				go o.Sweep(ctx, 100*time.Millisecond)
				_ = relay.Run(ctx, 200*time.Millisecond)
			}
		})
}

func (s *System) startToolrunner(i int) {
	var defs []bus.ConsumerDef
	for _, t := range s.opts.Tools {
		defs = append(defs, bus.ToolConsumer(t.Name))
	}
	if s.opts.Parser != nil {
		defs = append(defs, bus.ImportConsumer())
	}
	s.component(fmt.Sprintf("toolrunner-%d", i), defs,
		func(pub message.Publisher, js jetstream.JetStream, r *message.Router, sub message.Subscriber, reg prometheus.Registerer) func(context.Context) {
			lim, err := toolrunner.NewKVLimiter(context.Background(), js, 1)
			if err != nil {
				s.T.Fatalf("limiter: %v", err)
			}
			run := toolrunner.New(s.opts.Tools, toolrunner.FromStore(s.Store), lim, pub, toolrunner.NewMetrics(reg), s.opts.Log, s.opts.Now)
			run.Register(r, sub)
			if s.opts.Parser == nil {
				return nil
			}
			imp := toolrunner.NewImporter(s.Store, s.opts.Parser, pub, reg, s.opts.Log, s.opts.Now)
			imp.Register(r, sub)
			return func(ctx context.Context) { imp.Sweep(ctx, 500*time.Millisecond, 2*time.Second) }
		})
}

// Msg is one message seen on the bus.
type Msg struct {
	Subject string
	Type    string // Purser-Type header
	Header  nats.Header
	Data    []byte
}

// Watch collects messages of a subject pattern.
type Watch struct {
	t    testing.TB
	mu   sync.Mutex
	msgs []Msg
	ids  map[string]bool
	more chan struct{}
}

// Watch starts collecting messages on subject (core NATS: it sees every
// publish, stream or not).
func (s *System) Watch(subject string) *Watch {
	w := &Watch{t: s.T, more: make(chan struct{}, 1), ids: map[string]bool{}}
	sub, err := s.NC.Subscribe(subject, func(m *nats.Msg) {
		w.mu.Lock()
		// A message may be published more than once (an outbox relay and
		// the handler racing); its stream keeps one copy by Nats-Msg-Id,
		// and so does the watch.
		if id := m.Header.Get(bus.HeaderMsgID); id != "" {
			if w.ids[id] {
				w.mu.Unlock()
				return
			}
			w.ids[id] = true
		}
		w.msgs = append(w.msgs, Msg{Subject: m.Subject, Type: m.Header.Get(bus.HeaderType), Header: m.Header, Data: m.Data})
		w.mu.Unlock()
		select {
		case w.more <- struct{}{}:
		default:
		}
	})
	if err != nil {
		s.T.Fatal(err)
	}
	if err := s.NC.Flush(); err != nil {
		s.T.Fatal(err)
	}
	s.T.Cleanup(func() { _ = sub.Unsubscribe() })
	return w
}

// All returns the messages seen so far that match.
func (w *Watch) All(match func(Msg) bool) []Msg {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Msg
	for _, m := range w.msgs {
		if match == nil || match(m) {
			out = append(out, m)
		}
	}
	return out
}

// WaitN waits until n messages match and returns them; it fails the test
// after 30 s (a bound on hangs, not a speed claim).
func (w *Watch) WaitN(n int, match func(Msg) bool) []Msg {
	w.t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		if got := w.All(match); len(got) >= n {
			return got
		}
		select {
		case <-w.more:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			w.t.Fatalf("timed out waiting for %d matching messages; saw %d: %s", n, len(w.All(match)), w.describe())
		}
	}
}

// Quiet waits until no message arrived for d, so a test can assert that
// something did not happen after a settle period.
func (w *Watch) Quiet(d time.Duration) {
	for {
		select {
		case <-w.more:
		case <-time.After(d):
			return
		}
	}
}

func (w *Watch) describe() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := ""
	for _, m := range w.msgs {
		out += fmt.Sprintf("\n  %s %s %.200s", m.Subject, m.Type, m.Data)
	}
	return out
}

// OfType matches messages by Purser-Type.
func OfType(typ string) func(Msg) bool { return func(m Msg) bool { return m.Type == typ } }

// OnSubject matches messages by exact subject.
func OnSubject(subject string) func(Msg) bool {
	return func(m Msg) bool { return m.Subject == subject }
}

// And matches when every matcher does.
func And(ms ...func(Msg) bool) func(Msg) bool {
	return func(m Msg) bool {
		for _, f := range ms {
			if !f(m) {
				return false
			}
		}
		return true
	}
}

// Decode strictly decodes a message into T, failing the test otherwise.
func Decode[T any](t testing.TB, m Msg) T {
	t.Helper()
	var v T
	if err := contracts.Decode(m.Data, &v); err != nil {
		t.Fatalf("decode %s (%s): %v\n%s", m.Subject, m.Type, err, m.Data)
	}
	return v
}

// User sends turns as one person.
type User struct {
	S            *System
	Tenant, ID   string
	Roles        []string
	Conversation string
	Timezone     string
	n            int
}

// User returns a member of tenant in a conversation of their own.
func (s *System) User(tenant, id string, roles ...string) *User {
	if len(roles) == 0 {
		roles = []string{"member"}
	}
	return &User{S: s, Tenant: tenant, ID: id, Roles: roles, Conversation: "conv-" + id, Timezone: "Europe/London"}
}

// Say publishes a text turn and returns its turn id.
func (u *User) Say(text string) string {
	return u.send(contracts.UserTurn{Text: text})
}

// Confirm publishes a decision on a proposal and returns the turn id.
func (u *User) Confirm(proposalID, decision string, args json.RawMessage) string {
	return u.send(contracts.UserTurn{Confirm: &contracts.Confirm{ProposalID: proposalID, Decision: decision, Args: args}})
}

// Resend publishes turn id again, as a redelivery or a client retry would.
func (u *User) Resend(turnID, text string) {
	u.publish(contracts.UserTurn{TurnID: turnID, Text: text})
}

func (u *User) send(t contracts.UserTurn) string {
	u.n++
	t.TurnID = fmt.Sprintf("%s-%s-t%d", u.Conversation, u.ID, u.n)
	u.publish(t)
	return t.TurnID
}

func (u *User) publish(t contracts.UserTurn) {
	u.S.T.Helper()
	t.TenantID, t.UserID, t.Roles, t.ConversationID, t.Timezone, t.SentAt = u.Tenant, u.ID, u.Roles, u.Conversation, u.Timezone, time.Now().UTC()
	b, err := json.Marshal(t)
	if err != nil {
		u.S.T.Fatal(err)
	}
	subject, err := bus.TurnSubject(u.Tenant, u.Conversation)
	if err != nil {
		u.S.T.Fatal(err)
	}
	m := bus.NewMessage("turn-"+u.Tenant+"-"+t.TurnID, b, bus.Headers{Type: contracts.TypeUserTurn, Tenant: u.Tenant, User: u.ID,
		Conversation: u.Conversation, Correlation: t.TurnID})
	if err := u.S.Pub.Publish(subject, m); err != nil {
		u.S.T.Fatalf("publish turn: %v", err)
	}
}

// Agent matches this user's AGENT messages of one type for a turn ("" any).
func (u *User) Agent(typ, turnID string) func(Msg) bool {
	subject, _ := bus.AgentSubject(u.Tenant, u.ID, u.Conversation)
	return func(m Msg) bool {
		if m.Subject != subject || m.Type != typ {
			return false
		}
		if turnID == "" {
			return true
		}
		var probe struct {
			TurnID string `json:"turn_id"`
		}
		return json.Unmarshal(m.Data, &probe) == nil && probe.TurnID == turnID
	}
}

// Expect waits for this user's AGENT message of type typ for turnID and
// decodes it into T.
func Expect[T any](u *User, typ, turnID string) T {
	u.S.T.Helper()
	msgs := u.S.Bus.WaitN(1, u.Agent(typ, turnID))
	return Decode[T](u.S.T, msgs[0])
}

// SendToolRequest publishes a ToolRequest as the orchestrator would.
func (s *System) SendToolRequest(req contracts.ToolRequest) {
	s.T.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		s.T.Fatal(err)
	}
	subject, err := bus.ToolRequestSubject(req.Tool)
	if err != nil {
		s.T.Fatal(err)
	}
	m := bus.NewMessage("req-"+req.TenantID+"-"+req.CallID, b, bus.Headers{Type: contracts.TypeToolRequest, Tenant: req.TenantID,
		User: req.UserID, Conversation: req.ConversationID, Correlation: req.TurnID})
	if err := s.Pub.Publish(subject, m); err != nil {
		s.T.Fatalf("publish tool request: %v", err)
	}
}

// Result waits for the ToolResult of call id.
func (s *System) Result(tenant, conversation, callID string) contracts.ToolResult {
	s.T.Helper()
	subject, _ := bus.ToolResultSubject(tenant, conversation)
	msgs := s.Bus.WaitN(1, func(m Msg) bool {
		if m.Subject != subject {
			return false
		}
		var probe struct {
			CallID string `json:"call_id"`
		}
		return json.Unmarshal(m.Data, &probe) == nil && probe.CallID == callID
	})
	return Decode[contracts.ToolResult](s.T, msgs[0])
}
