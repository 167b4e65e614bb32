package bus_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
)

// replica is one process's subscriber and router on some consumers, as a
// service runs them.
type replica struct {
	nc     *nats.Conn
	sub    *bus.Subscriber
	cancel context.CancelFunc
	done   chan error
}

// startReplica runs handler h on defs in a replica of its own
// connection, stopped at the test's end if not before.
func (e *env) startReplica(name string, defs []bus.ConsumerDef, h message.NoPublishHandlerFunc) *replica {
	e.t.Helper()
	nc := natstest.Connect(e.t, e.srv, name)
	js, err := jetstream.New(nc)
	if err != nil {
		e.t.Fatal(err)
	}
	sub := bus.NewSubscriber(js, name, defs, quiet)
	r, err := bus.NewRouter(name, e.pub, quiet, bus.NewRouterMetrics(prometheus.NewRegistry()))
	if err != nil {
		e.t.Fatal(err)
	}
	for _, d := range defs {
		r.AddConsumerHandler(d.Name, d.Name, sub, h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rp := &replica{nc: nc, sub: sub, cancel: cancel, done: make(chan error, 1)}
	go func() { rp.done <- r.Run(ctx) }()
	select {
	case <-r.Running():
	case <-time.After(20 * time.Second):
		e.t.Fatal("router did not start")
	}
	e.t.Cleanup(func() { rp.stop(time.Second) })
	return rp
}

// stop is a graceful stop, as on SIGTERM: drain for at most grace, then
// stop the router.
func (rp *replica) stop(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := rp.sub.Drain(ctx)
	rp.cancel()
	<-rp.done
	rp.done <- nil // stop again is a no-op
	return err
}

// crash is a SIGKILL as NATS sees it: the connection drops with the
// messages held, nothing handed back, no pin given up.
func (rp *replica) crash() {
	rp.nc.Close()
	rp.cancel()
	<-rp.done
	rp.done <- nil
	_ = rp.sub.Close()
}

// A message in a handler when its process is told to stop finishes there
// and is acked; the message of the same key waiting behind it goes back
// to the stream once the first is settled (so the two keep their order)
// and the other replica handles it. Each is handled once.
func TestDrainFinishesWhatIsInHandAndHandsBackTheRest(t *testing.T) {
	def := orderedConsumer("drain")
	def.AckWait = 30 * time.Second // only a nak or an ack settles anything within the test
	e := newEnv(t, def)
	entered := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	handled := map[string][]string{}
	handler := func(name string) message.NoPublishHandlerFunc {
		return func(m *message.Message) error {
			if m.UUID == "first" {
				close(entered)
				<-release
			}
			mu.Lock()
			handled[m.UUID] = append(handled[m.UUID], name)
			mu.Unlock()
			return nil
		}
	}
	a := e.startReplica("svc-a", []bus.ConsumerDef{def}, handler("a"))
	e.publish("purser.notify.t1.u1", "first", `{}`)
	<-entered
	e.publish("purser.notify.t1.u1", "second", `{}`)
	c, err := e.js.Consumer(context.Background(), def.Stream, def.Name)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both messages taken by the first replica", func() bool {
		info, err := c.Info(context.Background())
		return err == nil && info.NumAckPending == 2
	})
	stopped := make(chan error, 1)
	go func() { stopped <- a.stop(20 * time.Second) }()
	// The first is let go only once the drain has begun: before it, the
	// second would be the stopping replica's to handle, as any message
	// of a replica not stopping is.
	select {
	case <-a.sub.Draining():
	case <-time.After(20 * time.Second):
		t.Fatal("the drain did not begin")
	}
	e.startReplica("svc-b", []bus.ConsumerDef{def}, handler("b"))
	close(release)
	if err := <-stopped; err != nil {
		t.Fatalf("drain: %v, want the held message finished within the grace", err)
	}
	waitFor(t, "both handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled["first"]) > 0 && len(handled["second"]) > 0
	})
	waitFor(t, "both acked", func() bool {
		info, err := c.Info(context.Background())
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0 && info.NumRedelivered == 0
	})
	mu.Lock()
	defer mu.Unlock()
	if got := handled["first"]; len(got) != 1 || got[0] != "a" {
		t.Errorf("first handled by %v, want once by the stopping replica", got)
	}
	if got := handled["second"]; len(got) != 1 || got[0] != "b" {
		t.Errorf("second handled by %v, want once by the other replica", got)
	}
}

// A handler that outlasts the grace is cancelled and its message goes
// back at once (the ack wait is far beyond the test) to the other replica.
func TestDrainHandsBackWhatOutlastsTheGrace(t *testing.T) {
	def := testConsumer("grace")
	def.AckWait = 30 * time.Second
	def.MaxDeliver = 5
	e := newEnv(t, def)
	entered := make(chan struct{}, 1)
	var cancelled atomic.Bool
	a := e.startReplica("svc-a", []bus.ConsumerDef{def}, func(m *message.Message) error {
		entered <- struct{}{}
		<-m.Context().Done()
		cancelled.Store(true)
		return m.Context().Err()
	})
	e.publish("purser.notify.t1.u1", "slow", `{}`)
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("handler never started")
	}
	got := make(chan string, 1)
	e.startReplica("svc-b", []bus.ConsumerDef{def}, func(m *message.Message) error {
		got <- m.Metadata.Get(bus.MetaNumDelivered)
		return nil
	})
	if err := a.stop(100 * time.Millisecond); err == nil {
		t.Fatal("drain reported everything finished, but the handler was still running")
	}
	if !cancelled.Load() {
		t.Error("the handler's context was not cancelled when the grace ran out")
	}
	select {
	case n := <-got:
		if n != "2" {
			t.Errorf("delivery %s on the other replica, want 2", n)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the unfinished message did not come back to the other replica")
	}
}

// A replica that stops gives up the TURNS-style pin of its consumer: the
// other replica takes the next message at once, long before the pin
// would lapse (PinnedTTL here is beyond the test).
func TestGracefulStopGivesUpThePin(t *testing.T) {
	def := orderedConsumer("lane")
	def.Pinned = true
	def.PinnedTTL = time.Minute
	e := newEnv(t, def)
	var mu sync.Mutex
	by := map[string]string{}
	handler := func(name string) message.NoPublishHandlerFunc {
		return func(m *message.Message) error {
			mu.Lock()
			defer mu.Unlock()
			by[m.UUID] = name
			return nil
		}
	}
	handledBy := func(id string) string {
		mu.Lock()
		defer mu.Unlock()
		return by[id]
	}
	a := e.startReplica("svc-a", []bus.ConsumerDef{def}, handler("a"))
	e.publish("purser.notify.t1.u1", "before", `{}`)
	waitFor(t, "the first message", func() bool { return handledBy("before") == "a" })
	e.startReplica("svc-b", []bus.ConsumerDef{def}, handler("b"))
	if err := a.stop(5 * time.Second); err != nil {
		t.Fatalf("drain: %v", err)
	}
	e.publish("purser.notify.t1.u1", "after", `{}`)
	waitFor(t, "the other replica to take the lane", func() bool { return handledBy("after") == "b" })
}
