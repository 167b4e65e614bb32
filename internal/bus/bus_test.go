package bus_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type env struct {
	t   testing.TB
	srv *server.Server
	nc  *nats.Conn
	js  jetstream.JetStream
	pub *bus.Publisher
	reg *prometheus.Registry // the latest router's metrics
}

func newEnv(t testing.TB, defs ...bus.ConsumerDef) *env {
	t.Helper()
	srv, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := bus.Provision(ctx, js, defs...); err != nil {
		t.Fatalf("provision: %v", err)
	}
	return &env{t: t, srv: srv, nc: nc, js: js, pub: bus.NewPublisher(nc, js)}
}

// serve runs a router of service with handler h on consumer def until the
// returned stop is called (or the test ends).
func (e *env) serve(service string, def bus.ConsumerDef, h message.NoPublishHandlerFunc) (stop func()) {
	e.t.Helper()
	js, err := jetstream.New(natstest.Connect(e.t, e.srv, service))
	if err != nil {
		e.t.Fatal(err)
	}
	sub := bus.NewSubscriber(js, service, []bus.ConsumerDef{def}, quiet)
	e.reg = prometheus.NewRegistry()
	r, err := bus.NewRouter(service, e.pub, quiet, bus.NewRouterMetrics(e.reg))
	if err != nil {
		e.t.Fatal(err)
	}
	r.AddConsumerHandler(def.Name, def.Name, sub, h)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	select {
	case <-r.Running():
	case <-time.After(20 * time.Second):
		e.t.Fatal("router did not start")
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				e.t.Errorf("router: %v", err)
			}
			_ = sub.Close()
		})
	}
	e.t.Cleanup(stop)
	return stop
}

func (e *env) publish(subject, id string, payload string) {
	e.t.Helper()
	m := bus.NewMessage(id, []byte(payload), bus.Headers{Type: "test", Tenant: "t1", Correlation: "turn-" + id})
	if err := e.pub.Publish(subject, m); err != nil {
		e.t.Fatalf("publish: %v", err)
	}
}

// waitFor polls cond for up to 20 s: the bound on a hang, not a speed claim.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testConsumer(name string) bus.ConsumerDef {
	return bus.ConsumerDef{Name: name, Stream: bus.StreamNotify, Filter: "purser.notify.t1.>", AckWait: 2 * time.Second,
		MaxDeliver: 2, MaxAckPending: 8, BackOff: []time.Duration{20 * time.Millisecond}}
}

func dlqMessages(t *testing.T, js jetstream.JetStream, service string, want int) []jetstream.Msg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := js.OrderedConsumer(ctx, bus.StreamDLQ, jetstream.OrderedConsumerConfig{FilterSubjects: []string{"purser.dlq." + service}})
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for len(out) < want {
		m, err := c.Next(jetstream.FetchMaxWait(20 * time.Second))
		if err != nil {
			t.Fatalf("dead letters: got %d of %d: %v", len(out), want, err)
		}
		out = append(out, m)
	}
	return out
}

func TestProvisionIsIdempotentAndConcurrent(t *testing.T) {
	e := newEnv(t)
	defs := append(bus.OrchestratorConsumers(), bus.NotifierConsumers()...)
	defs = append(defs, bus.ToolConsumer("add_expense"))
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			errs[i] = bus.Provision(ctx, e.js, defs...)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("concurrent provision: %v", err)
		}
	}
	ctx := context.Background()
	for _, sc := range bus.StreamConfigs() {
		s, err := e.js.Stream(ctx, sc.Name)
		if err != nil {
			t.Fatalf("stream %s missing: %v", sc.Name, err)
		}
		if got := s.CachedInfo().Config; got.Storage != jetstream.FileStorage || got.Duplicates == 0 {
			t.Errorf("stream %s: storage %v, duplicates window %v", sc.Name, got.Storage, got.Duplicates)
		}
	}
	for _, d := range defs {
		c, err := e.js.Consumer(ctx, d.Stream, d.Name)
		if err != nil {
			t.Fatalf("consumer %s missing: %v", d.Name, err)
		}
		cfg := c.CachedInfo().Config
		if cfg.Durable != d.Name || cfg.AckPolicy != jetstream.AckExplicitPolicy || cfg.MaxDeliver < bus.ServerMaxDeliver {
			t.Errorf("consumer %s: durable %q ack %v max deliver %d", d.Name, cfg.Durable, cfg.AckPolicy, cfg.MaxDeliver)
		}
	}
}

// Turns of one conversation land on one lane; the lane consumer keeps them
// in order with one in flight.
func TestTurnsOfAConversationShareALane(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for i := range 5 {
		e.publish("purser.turns.t1.conv-a", fmt.Sprintf("a%d", i), "{}")
		e.publish("purser.turns.t1.conv-b", fmt.Sprintf("b%d", i), "{}")
	}
	s, err := e.js.Stream(ctx, bus.StreamTurns)
	if err != nil {
		t.Fatal(err)
	}
	lanes := map[string]map[string]bool{}
	for seq := uint64(1); seq <= 10; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(m.Subject, ".")
		if len(parts) != 5 || parts[0] != "purser" || parts[1] != "turns" {
			t.Fatalf("stored subject %q, want purser.turns.<lane>.<tenant>.<conversation>", m.Subject)
		}
		if lanes[parts[4]] == nil {
			lanes[parts[4]] = map[string]bool{}
		}
		lanes[parts[4]][parts[2]] = true
	}
	for conv, ls := range lanes {
		if len(ls) != 1 {
			t.Errorf("conversation %s spread over lanes %v", conv, ls)
		}
	}
	want, _ := bus.TurnSubject("t1", "conv-a")
	if want != "purser.turns.t1.conv-a" {
		t.Errorf("TurnSubject = %q", want)
	}
}

func TestPublishingTheSameIDTwiceStoresOnce(t *testing.T) {
	e := newEnv(t)
	e.publish("purser.notify.t1.u1", "same-id", `{"n":1}`)
	e.publish("purser.notify.t1.u1", "same-id", `{"n":1}`)
	e.publish("purser.notify.t1.u1", "other-id", `{"n":2}`)
	s, err := e.js.Stream(context.Background(), bus.StreamNotify)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 {
		t.Fatalf("stream holds %d messages, want 2 (the republished id dropped)", info.State.Msgs)
	}
}

func TestHandledMessageIsAckedWithItsHeaders(t *testing.T) {
	def := testConsumer("ok")
	e := newEnv(t, def)
	got := make(chan *message.Message, 1)
	e.serve("svc", def, func(m *message.Message) error { got <- m; return nil })
	e.publish("purser.notify.t1.u1", "m1", `{"hello":1}`)
	var m *message.Message
	select {
	case m = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("handler never ran")
	}
	if m.UUID != "m1" || string(m.Payload) != `{"hello":1}` || m.Metadata.Get(bus.HeaderTenant) != "t1" ||
		m.Metadata.Get(bus.HeaderCorrelation) != "turn-m1" || m.Metadata.Get(bus.MetaSubject) != "purser.notify.t1.u1" {
		t.Fatalf("handler got id %q payload %s metadata %v", m.UUID, m.Payload, m.Metadata)
	}
	c, err := e.js.Consumer(context.Background(), def.Stream, def.Name)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the ack", func() bool {
		info, err := c.Info(context.Background())
		return err == nil && info.AckFloor.Consumer == 1 && info.NumAckPending == 0
	})
}

func TestPermanentErrorGoesStraightToTheDeadLetterQueue(t *testing.T) {
	def := testConsumer("perm")
	e := newEnv(t, def)
	var calls atomic.Int32
	e.serve("svc", def, func(m *message.Message) error {
		calls.Add(1)
		return bus.Permanent(errors.New("payload: unknown field \"x\""))
	})
	e.publish("purser.notify.t1.u1", "bad", `{"x":1}`)
	dl := dlqMessages(t, e.js, "svc", 1)
	if string(dl[0].Data()) != `{"x":1}` {
		t.Errorf("dead letter payload = %s", dl[0].Data())
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("handler ran %d times; a permanent error must not be retried", n)
	}
	h := dl[0].Headers()
	if got := h.Get(bus.HeaderDLQReason); !strings.Contains(got, `unknown field "x"`) {
		t.Errorf("%s = %q, want the handler's reason", bus.HeaderDLQReason, got)
	}
	if got := h.Get(bus.HeaderDLQSubject); got != "purser.notify.t1.u1" {
		t.Errorf("%s = %q", bus.HeaderDLQSubject, got)
	}
	waitFor(t, "the dead_letter count", func() bool {
		return testutil.ToFloat64(deadLetters(e.reg)) == 1
	})
}

// deadLetters is the purser_bus_messages_handled_total{outcome="dead_letter"}
// series of reg, summed.
func deadLetters(reg *prometheus.Registry) prometheus.Collector {
	return prometheus.CollectorFunc(func(ch chan<- prometheus.Metric) {
		mfs, _ := reg.Gather()
		var n float64
		for _, mf := range mfs {
			if mf.GetName() != "purser_bus_messages_handled_total" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "outcome" && l.GetValue() == "dead_letter" {
						n += m.GetCounter().GetValue()
					}
				}
			}
		}
		ch <- prometheus.MustNewConstMetric(prometheus.NewDesc("dead_letters", "", nil, nil), prometheus.CounterValue, n)
	})
}

func TestFailingMessageIsRetriedThenDeadLetteredWithTheReason(t *testing.T) {
	def := testConsumer("flaky")
	e := newEnv(t, def)
	var calls atomic.Int32
	e.serve("svc", def, func(m *message.Message) error {
		calls.Add(1)
		return errors.New("database is down")
	})
	e.publish("purser.notify.t1.u1", "doomed", `{}`)
	dl := dlqMessages(t, e.js, "svc", 1)
	reason := dl[0].Headers().Get(bus.HeaderDLQReason)
	if !strings.Contains(reason, "max deliveries") || !strings.Contains(reason, "database is down") {
		t.Errorf("dead letter reason = %q", reason)
	}
	if got := dl[0].Headers().Get(bus.HeaderDLQSubject); got != "purser.notify.t1.u1" {
		t.Errorf("dead letter original subject = %q", got)
	}
	// 2 deliveries × (1 attempt + 2 in-process retries).
	waitFor(t, "all attempts", func() bool { return calls.Load() >= 6 })
	if n := calls.Load(); n != 6 {
		t.Errorf("handler ran %d times, want 6: retries are bounded", n)
	}
}

// A message whose handler failed because NATS was unavailable (its
// publish found no server) is not at fault: it is retried past MaxDeliver
// and handled once the bus is back, never dead-lettered. A message stranded
// by the server's own delivery bound would leave its turn waiting forever.
func TestBusOutageDoesNotDeadLetterTheMessage(t *testing.T) {
	def := testConsumer("outage")
	e := newEnv(t, def)
	var calls atomic.Int32
	handled := make(chan string, 1)
	e.serve("svc", def, func(m *message.Message) error {
		// 2 deliveries × 3 attempts fail, as many as dead-letter an
		// ordinary failure; then the bus is back.
		if calls.Add(1) <= 6 {
			return fmt.Errorf("publish result: %w", nats.ErrNoResponders)
		}
		handled <- m.Metadata.Get(bus.MetaNumDelivered)
		return nil
	})
	e.publish("purser.notify.t1.u1", "survivor", `{}`)
	select {
	case n := <-handled:
		if n != "3" {
			t.Errorf("handled on delivery %s, want 3", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the message never came back after %d failed attempts", calls.Load())
	}
	c, err := e.js.Stream(context.Background(), bus.StreamDLQ)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := c.Info(context.Background()); err != nil || info.State.Msgs != 0 {
		t.Errorf("dead letters after a bus outage: %+v %v", info.State, err)
	}
}

func TestPanicIsRecoveredAndRetried(t *testing.T) {
	def := testConsumer("panicky")
	e := newEnv(t, def)
	var calls atomic.Int32
	done := make(chan struct{})
	e.serve("svc", def, func(m *message.Message) error {
		if calls.Add(1) == 1 {
			panic("boom")
		}
		close(done)
		return nil
	})
	e.publish("purser.notify.t1.u1", "p1", `{}`)
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("message was not retried after a panic")
	}
}

// A handler slower than the ack wait keeps its message: it is delivered
// once, not handed to another consumer instance meanwhile.
func TestSlowHandlerIsNotRedelivered(t *testing.T) {
	def := testConsumer("slow")
	def.AckWait = time.Second
	e := newEnv(t, def)
	var calls atomic.Int32
	finished := make(chan struct{})
	h := func(m *message.Message) error {
		if calls.Add(1) == 1 {
			time.Sleep(3500 * time.Millisecond) // 3.5 ack waits
			close(finished)
		}
		return nil
	}
	e.serve("svc-a", def, h)
	e.serve("svc-b", def, h)
	e.publish("purser.notify.t1.u1", "slow", `{}`)
	select {
	case <-finished:
	case <-time.After(20 * time.Second):
		t.Fatal("slow handler never finished")
	}
	c, _ := e.js.Consumer(context.Background(), def.Stream, def.Name)
	waitFor(t, "the ack", func() bool {
		info, err := c.Info(context.Background())
		return err == nil && info.NumAckPending == 0
	})
	if n := calls.Load(); n != 1 {
		t.Fatalf("handled %d times, want once: in-progress heartbeats must hold the message", n)
	}
}

// Work unfinished at shutdown returns to the stream at once, and the next
// instance gets it.
func TestShutdownHandsUnfinishedWorkBack(t *testing.T) {
	def := testConsumer("handback")
	def.AckWait = 30 * time.Second // far beyond the test: only a nak can bring it back
	def.MaxDeliver = 5
	e := newEnv(t, def)
	started := make(chan struct{}, 1)
	stop := e.serve("svc", def, func(m *message.Message) error {
		started <- struct{}{}
		<-m.Context().Done()
		return m.Context().Err()
	})
	e.publish("purser.notify.t1.u1", "unfinished", `{}`)
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("handler never started")
	}
	stop()
	got := make(chan string, 1)
	e.serve("svc", def, func(m *message.Message) error { got <- m.Metadata.Get(bus.MetaNumDelivered); return nil })
	select {
	case n := <-got:
		if n != "2" {
			t.Errorf("redelivery number %s, want 2", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("unfinished message did not come back after shutdown")
	}
}
