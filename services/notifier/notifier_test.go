package notifier

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The handlers are called as the router calls them, on both stores; what
// they publish is recorded rather than sent, since it is what they decide
// that is checked here. The ingress tests run them over real NATS.

type published struct {
	subject string
	id      string
	frame   contracts.ServerFrame
	meta    message.Metadata
}

type recorder struct {
	mu  sync.Mutex
	out []published
}

func (r *recorder) Publish(subject string, msgs ...*message.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		var f contracts.ServerFrame
		if err := json.Unmarshal(m.Payload, &f); err != nil {
			return err
		}
		r.out = append(r.out, published{subject: subject, id: m.UUID, frame: f, meta: m.Metadata})
	}
	return nil
}

func (r *recorder) Close() error { return nil }

func newNotifier(t *testing.T, dsn string) (*Notifier, *recorder) {
	rec := &recorder{}
	st := storetest.Open(t, dsn)
	return New(st, rec, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now), rec
}

func agentMsg(id, user, typ string, payload any) *message.Message {
	b, _ := json.Marshal(payload)
	m := message.NewMessage(id, b)
	m.Metadata.Set(bus.MetaSubject, "purser.agent.acme."+user+".c1")
	m.Metadata.Set(bus.HeaderType, typ)
	return m
}

func TestRedeliveredEventsKeepTheirSeq(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			n, rec := newNotifier(t, e.DSN(t))
			handle := func(m *message.Message) {
				t.Helper()
				if err := n.HandleAgent(m); err != nil {
					t.Fatalf("handle %s: %v", m.UUID, err)
				}
			}
			handle(agentMsg("e1", "ann", contracts.TypeAnswer, contracts.Answer{TurnID: "t1", Content: "one"}))
			handle(agentMsg("e2", "ann", contracts.TypeClarify, contracts.Clarify{TurnID: "t2", Question: "two?"}))
			handle(agentMsg("e1", "ann", contracts.TypeAnswer, contracts.Answer{TurnID: "t1", Content: "one"})) // redelivered
			handle(agentMsg("e3", "bob", contracts.TypeAnswer, contracts.Answer{TurnID: "t3", Content: "bob's"}))
			note, _ := json.Marshal(contracts.Notification{ID: "n1", Kind: "import_completed", Title: "Imported 3 transactions", CreatedAt: time.Now().UTC()})
			for range 2 { // the notification, and its redelivery
				m := message.NewMessage("n-n1", note)
				m.Metadata.Set(bus.MetaSubject, "purser.notify.acme.ann")
				if err := n.HandleNotify(m); err != nil {
					t.Fatal(err)
				}
			}

			want := []struct {
				subject, typ string
				seq          int64
			}{
				{"purser.deliver.acme.ann", contracts.FrameAnswer, 1},
				{"purser.deliver.acme.ann", contracts.FrameClarify, 2},
				{"purser.deliver.acme.ann", contracts.FrameAnswer, 1}, // the same seq again
				{"purser.deliver.acme.bob", contracts.FrameAnswer, 1}, // bob's own sequence
				{"purser.deliver.acme.ann", contracts.FrameNotification, 3},
				{"purser.deliver.acme.ann", contracts.FrameNotification, 3},
			}
			if len(rec.out) != len(want) {
				t.Fatalf("published %d frames, want %d", len(rec.out), len(want))
			}
			for i, w := range want {
				got := rec.out[i]
				if got.subject != w.subject || got.frame.Type != w.typ || got.frame.Seq != w.seq {
					t.Errorf("frame %d = %s %s seq %d, want %s %s seq %d", i, got.subject, got.frame.Type, got.frame.Seq, w.subject, w.typ, w.seq)
				}
			}
			if rec.out[0].id != rec.out[2].id {
				t.Errorf("a redelivered event was republished with a new id (%s, %s)", rec.out[0].id, rec.out[2].id)
			}

			// Catch-up returns each stored frame once; the inbox holds one
			// notification.
			r := ask(t, n, bus.NotifierResume(), "acme.ann", `{"after_seq":0}`)
			if r.Error != nil || len(r.Frames) != 3 || r.More {
				t.Fatalf("resume = %d frames, more %v, error %v", len(r.Frames), r.More, r.Error)
			}
			inbox := ask(t, n, bus.NotifierNotifications(), "acme.ann", ``)
			if inbox.Error != nil || len(inbox.Notifications) != 1 || inbox.Notifications[0].Read {
				t.Fatalf("inbox = %+v", inbox)
			}
		})
	}
}

func TestBadEventsArePermanentErrors(t *testing.T) {
	n, rec := newNotifier(t, storetest.SQLiteDSN(t))
	cases := map[string]*message.Message{
		"unknown type":   agentMsg("e1", "ann", "Surprise", contracts.Answer{TurnID: "t1", Content: "x"}),
		"unknown field":  agentMsg("e2", "ann", contracts.TypeAnswer, map[string]any{"turn_id": "t1", "content": "x", "admin": true}),
		"invalid answer": agentMsg("e3", "ann", contracts.TypeAnswer, contracts.Answer{}),
		"bad subject":    agentMsg("e4", "ann.evil", contracts.TypeAnswer, contracts.Answer{TurnID: "t1", Content: "x"}),
	}
	for name, m := range cases {
		err := n.HandleAgent(m)
		if err == nil || !bus.IsPermanent(err) {
			t.Errorf("%s: error = %v, want a permanent error", name, err)
		}
	}
	if len(rec.out) != 0 {
		t.Errorf("bad events published %d frames", len(rec.out))
	}
}

// ask answers one request on call's subject for who ("tenant.user") as
// the responder would, and decodes the reply.
func ask[Req, Rep any](t *testing.T, n *Notifier, call bus.NotifierCall[Req, Rep], who, body string) Rep {
	t.Helper()
	for _, e := range n.endpoints() {
		if e.op != call.Op {
			continue
		}
		b, err := json.Marshal(e.answer(&nats.Msg{Subject: "purser.notifier." + call.Op + "." + who, Data: []byte(body)}))
		if err != nil {
			t.Fatalf("encode %s reply: %v", call.Op, err)
		}
		var rep Rep
		if err := contracts.Decode(b, &rep); err != nil {
			t.Fatalf("decode %s reply %s: %v", call.Op, b, err)
		}
		return rep
	}
	t.Fatalf("no endpoint answers %s", call.Op)
	panic("unreachable")
}

// failureOf is call with any reply read as its failure alone.
func failureOf[Req, Rep any](call bus.NotifierCall[Req, Rep]) bus.NotifierCall[Req, contracts.InboxFailure] {
	return bus.NotifierCall[Req, contracts.InboxFailure]{Op: call.Op}
}

// Every op is served, each on a subject of its own.
func TestEveryRequestHasItsOwnSubject(t *testing.T) {
	n, _ := newNotifier(t, storetest.SQLiteDSN(t))
	seen := map[string]bool{}
	for _, e := range n.endpoints() {
		if seen[e.wildcard] {
			t.Errorf("subject %s is served twice", e.wildcard)
		}
		seen[e.wildcard] = true
	}
	if got, want := len(seen), 14; got != want {
		t.Errorf("served %d subjects, want %d", got, want)
	}
}

func TestInboxRequests(t *testing.T) {
	n, _ := newNotifier(t, storetest.SQLiteDSN(t))
	note, _ := json.Marshal(contracts.Notification{ID: "n1", Kind: "import_failed", Title: "Import failed", CreatedAt: time.Now().UTC()})
	m := message.NewMessage("n-n1", note)
	m.Metadata.Set(bus.MetaSubject, "purser.notify.acme.ann")
	if err := n.HandleNotify(m); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		give     func() contracts.InboxFailure
		wantCode string
	}{
		{"unknown field", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierResume()), "acme.ann", `{"after":1}`)
		}, contracts.InboxBadRequest},
		{"another op's field", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierResume()), "acme.ann", `{"after_seq":1,"unread":true}`)
		}, contracts.InboxBadRequest},
		{"negative seq", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierResume()), "acme.ann", `{"after_seq":-1}`)
		}, contracts.InboxBadRequest},
		{"bad subject", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierResume()), "acme.ann.x", `{}`)
		}, contracts.InboxBadRequest},
		{"read without id", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierMarkRead()), "acme.ann", `{}`)
		}, contracts.InboxBadRequest},
		{"read with an empty body", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierMarkRead()), "acme.ann", ``)
		}, contracts.InboxBadRequest},
		{"turn without id", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierTurnFrames()), "acme.ann", `{}`)
		}, contracts.InboxBadRequest},
		{"history without conversation", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierHistory()), "acme.ann", `{"limit":5}`)
		}, contracts.InboxBadRequest},
		{"user message without text", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierUserMessage()), "acme.ann", `{"turn_id":"t1","conversation_id":"c1"}`)
		}, contracts.InboxBadRequest},
		{"match of an unknown tool", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierMatch()), "acme.ann", `{"conversation_id":"c1","tool":"rm_rf"}`)
		}, contracts.InboxBadRequest},
		{"match with nothing pending", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierMatch()), "acme.ann", `{"conversation_id":"c1","tool":"delete_expense","args":{"id":1}}`)
		}, contracts.InboxConflict},
		{"read someone else's", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierMarkRead()), "acme.bob", `{"id":"n1"}`)
		}, contracts.InboxNotFound},
		{"read other tenant", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierMarkRead()), "evil.ann", `{"id":"n1"}`)
		}, contracts.InboxNotFound},
		{"no such id", func() contracts.InboxFailure {
			return ask(t, n, failureOf(bus.NotifierMarkRead()), "acme.ann", `{"id":"n2"}`)
		}, contracts.InboxNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.give()
			if got.Error == nil || got.Error.Code != tt.wantCode {
				t.Fatalf("reply %+v, want error %s", got.Error, tt.wantCode)
			}
			if strings.Contains(got.Error.Message, "sql") {
				t.Errorf("error leaks internals: %q", got.Error.Message)
			}
		})
	}
	if unread := ask(t, n, bus.NotifierNotifications(), "acme.ann", `{"unread":true}`); len(unread.Notifications) != 1 {
		t.Fatalf("unread before reading = %+v", unread)
	}
	if r := ask(t, n, bus.NotifierMarkRead(), "acme.ann", `{"id":"n1"}`); r.Error != nil {
		t.Fatalf("mark read: %+v", r.Error)
	}
	if unread := ask(t, n, bus.NotifierNotifications(), "acme.ann", `{"unread":true}`); len(unread.Notifications) != 0 {
		t.Fatalf("unread after reading = %+v", unread)
	}
	if all := ask(t, n, bus.NotifierNotifications(), "acme.ann", ``); len(all.Notifications) != 1 || !all.Notifications[0].Read {
		t.Fatalf("inbox after reading = %+v", all)
	}
}

// A delivered frame carries purser's headers, with the turn's correlation
// id and a traceparent in the turn's trace, so `nats sub 'purser.>'` and a
// tracer can follow a turn to the socket.
func TestDeliveredFramesCarryTheTurnsHeaders(t *testing.T) {
	n, rec := newNotifier(t, storetest.SQLiteDSN(t))
	m := agentMsg("e1", "ann", contracts.TypeAnswer, contracts.Answer{TurnID: "t9", Content: "one"})
	m.Metadata.Set(bus.HeaderCorrelation, "t9")
	if err := n.HandleAgent(m); err != nil {
		t.Fatal(err)
	}
	if len(rec.out) != 1 {
		t.Fatalf("published %d frames", len(rec.out))
	}
	got := rec.out[0].meta
	for h, want := range map[string]string{bus.HeaderType: contracts.FrameAnswer, bus.HeaderTenant: "acme", bus.HeaderUser: "ann",
		bus.HeaderConversation: "c1", bus.HeaderCorrelation: "t9"} {
		if got.Get(h) != want {
			t.Errorf("%s = %q, want %q", h, got.Get(h), want)
		}
	}
	if tp, turn := got.Get(bus.HeaderTraceparent), bus.Traceparent("t9", "x"); len(tp) < 36 || tp[:36] != turn[:36] {
		t.Errorf("traceparent %q is not in the turn's trace %q", tp, turn[:36])
	}
}

// One user's frames being published must not hold up another user's: a
// lock per user, not a stripe shared by many (with 1,000 users on 64
// stripes, each waited behind fifteen others' commits).
func TestUserLocksKeepUsersApart(t *testing.T) {
	var l userLocks
	unlockA := l.lock("t\x00a")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 500 {
			l.lock(fmt.Sprintf("t\x00u%d", i))()
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("other users' locks waited for user a's")
	}
	// The same user waits.
	got := make(chan struct{})
	go func() { l.lock("t\x00a")(); close(got) }()
	for waiting := false; !waiting; runtime.Gosched() {
		l.mu.Lock()
		waiting = l.locks["t\x00a"].refs == 2
		l.mu.Unlock()
	}
	select {
	case <-got:
		t.Fatal("user a's second lock did not wait for the first")
	default:
	}
	unlockA()
	<-got
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.locks) != 0 {
		t.Errorf("%d locks kept after use", len(l.locks))
	}
}

// A tool call's start that comes after its result (redelivered after the
// notifier died between the two) is neither stored nor sent: it would show
// the call running again after the turn's answer. In order, both go.
func TestAToolStartAfterItsResultIsDropped(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			n, rec := newNotifier(t, e.DSN(t))
			progress := func(id, call, status string) {
				t.Helper()
				m := agentMsg(id, "ann", contracts.TypeToolProgress, contracts.ToolProgress{CallID: call, Tool: contracts.ToolListExpenses, Status: status})
				m.Metadata.Set(bus.HeaderCorrelation, "t1")
				if err := n.HandleAgent(m); err != nil {
					t.Fatalf("handle %s: %v", id, err)
				}
			}
			progress("s1", "call1", "started")
			progress("r1", "call1", "succeeded")
			progress("r2", "call2", "succeeded")
			progress("s2", "call2", "started") // late: its result is stored
			var sent []string
			for _, p := range rec.out {
				sent = append(sent, fmt.Sprintf("%s:%s:%d", p.frame.Type, p.frame.Tool.CallID, p.frame.Seq))
			}
			want := "tool_start:call1:1 tool_result:call1:2 tool_result:call2:3"
			if got := strings.Join(sent, " "); got != want {
				t.Fatalf("sent %s, want %s", got, want)
			}
			stored, err := n.store.FramesOfTurn(t.Context(), "acme", "ann", "t1", 10)
			if err != nil || len(stored) != 3 {
				t.Fatalf("stored %d frames of the turn (err %v), want 3: the late start is not kept", len(stored), err)
			}
		})
	}
}

// The audit op answers in the scope the ingress states: a person's own
// calls with their arguments, or, for an owner, the tenant's calls with
// other people's arguments left out.
func TestAuditScopes(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			st := storetest.Open(t, e.DSN(t))
			n := New(st, &recorder{}, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)), time.Now)
			at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
			for i, c := range []struct{ tenant, user, args string }{
				{"acme", "olga", `{"item":"rent"}`},
				{"acme", "bob", `{"item":"secret sushi","amount":"42.17"}`},
				{"acme", "olga", `{"query":"bank"}`},
				{"evil", "olga", `{"item":"elsewhere"}`},
			} {
				id := fmt.Sprintf("a%d", i+1)
				if err := st.AppendAudit(t.Context(), store.AuditEntry{TenantID: c.tenant, ID: id, UserID: c.user, Tool: contracts.ToolAddExpense,
					CallID: id, Outcome: "ok", Args: json.RawMessage(c.args), CreatedAt: at.Add(time.Duration(i) * time.Second)}); err != nil {
					t.Fatal(err)
				}
			}
			type row struct{ ID, User, Args string }
			rows := func(r contracts.AuditReply) []row {
				if r.Error != nil {
					t.Fatalf("audit failed: %+v", r.Error)
				}
				out := []row{}
				for _, e := range r.Audit {
					out = append(out, row{e.ID, e.UserID, string(e.Args)})
				}
				return out
			}
			tests := []struct {
				name, who, body string
				want            []row
			}{
				{"owner, tenant scope", "acme.olga", `{"scope":"tenant"}`,
					[]row{{"a3", "olga", `{"query":"bank"}`}, {"a2", "bob", ""}, {"a1", "olga", `{"item":"rent"}`}}},
				{"member, own scope", "acme.bob", `{"scope":"own"}`,
					[]row{{"a2", "bob", `{"item":"secret sushi","amount":"42.17"}`}}},
				{"no scope is own", "acme.bob", `{"limit":10}`,
					[]row{{"a2", "bob", `{"item":"secret sushi","amount":"42.17"}`}}},
				{"owner, own scope", "acme.olga", `{"scope":"own"}`,
					[]row{{"a3", "olga", `{"query":"bank"}`}, {"a1", "olga", `{"item":"rent"}`}}},
				{"another tenant", "evil.bob", `{"scope":"tenant"}`,
					[]row{{"a4", "olga", ""}}},
				{"limit", "acme.olga", `{"scope":"tenant","limit":1}`,
					[]row{{"a3", "olga", `{"query":"bank"}`}}},
			}
			for _, tt := range tests {
				got := rows(ask(t, n, bus.NotifierAudit(), tt.who, tt.body))
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: audit (-want +got):\n%s", tt.name, diff)
				}
			}
		})
	}
}
