package bus_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
)

// BenchmarkHop measures one message's trip publish → durable consumer →
// handler → ack, one at a time, through purser's bus and through bare
// nats.go jetstream calls on the same server in the same run. The ratio
// of the two is the bus's overhead. Besides the mean (ns/op) each reports
// the median, 99th percentile and longest hop, so that a rare slow hop is
// seen rather than averaged away.
//
//	go test -run '^$' -bench 'BenchmarkHop$' -count 4 ./internal/bus
func BenchmarkHop(b *testing.B) {
	b.Run("raw-jetstream", func(b *testing.B) {
		srv, nc := natstest.Start(b)
		js, _ := jetstream.New(nc)
		ctx := context.Background()
		def := benchConsumer()
		if err := bus.Provision(ctx, js, def); err != nil {
			b.Fatal(err)
		}
		cjs, _ := jetstream.New(natstest.Connect(b, srv, "consumer"))
		c, err := cjs.Consumer(ctx, def.Stream, def.Name)
		if err != nil {
			b.Fatal(err)
		}
		got := make(chan struct{}, 1)
		cc, err := c.Consume(func(m jetstream.Msg) {
			_ = m.DoubleAck(ctx)
			got <- struct{}{}
		}, jetstream.PullMaxMessages(1))
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Stop()
		hops := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			if _, err := js.Publish(ctx, "purser.notify.t1.u1", []byte(`{"n":1}`), jetstream.WithMsgID(fmt.Sprintf("raw-%d", i))); err != nil {
				b.Fatal(err)
			}
			<-got
			hops = append(hops, time.Since(start))
		}
		b.StopTimer()
		reportHops(b, hops)
	})
	b.Run("purser-bus", func(b *testing.B) {
		def := benchConsumer()
		be := newEnv(b, def)
		got := make(chan struct{}, 1)
		be.serve("bench", def, func(m *message.Message) error { got <- struct{}{}; return nil })
		hops := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			start := time.Now()
			m := bus.NewMessage(fmt.Sprintf("bus-%d", i), []byte(`{"n":1}`), bus.Headers{Type: "bench", Tenant: "t1"})
			if err := be.pub.Publish("purser.notify.t1.u1", m); err != nil {
				b.Fatal(err)
			}
			<-got
			hops = append(hops, time.Since(start))
		}
		b.StopTimer()
		reportHops(b, hops)
	})
}

// reportHops reports the median, 99th percentile and longest of hops, in
// milliseconds.
func reportHops(b *testing.B, hops []time.Duration) {
	if len(hops) == 0 {
		return
	}
	slices.Sort(hops)
	at := func(q float64) float64 {
		return float64(hops[min(len(hops)-1, int(q*float64(len(hops))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "ms-p50")
	b.ReportMetric(at(0.99), "ms-p99")
	b.ReportMetric(float64(hops[len(hops)-1].Microseconds())/1000, "ms-max")
}

func benchConsumer() bus.ConsumerDef {
	return bus.ConsumerDef{Name: "bench", Stream: bus.StreamNotify, Filter: "purser.notify.>", AckWait: 30 * time.Second, MaxDeliver: 3, MaxAckPending: 1}
}

// BenchmarkLaneTakeover measures how long a TURNS lane stays without a
// holder when the orchestrator replica holding it stops: two replicas
// serve every lane (the orchestrator's consumer definitions) on one
// server; the one that handled a conversation's first turn is stopped,
// gracefully (as on SIGTERM: its subscriber closes, handing back what it
// held) or by a crash (its connection drops, nothing handed back), and
// the conversation's next turn is published at that moment (a graceful
// stop, once it returned). The figure, ms/takeover, is the time from the
// stop to the other replica handling that turn, ms-worst the longest;
// each round is logged. Run it with -benchtime=Nx: a round
// lasts up to PinnedTTL.
//
//	go test -run '^$' -bench LaneTakeover -benchtime 10x ./internal/bus
func BenchmarkLaneTakeover(b *testing.B) {
	for _, crash := range []bool{false, true} {
		name := "graceful"
		if crash {
			name = "crash"
		}
		b.Run(name, func(b *testing.B) {
			var total, worst time.Duration
			for i := range b.N {
				d := laneTakeover(b, crash)
				b.Logf("round %d: %v", i, d.Round(time.Millisecond))
				total += d
				worst = max(worst, d)
			}
			b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/takeover")
			b.ReportMetric(float64(worst.Milliseconds()), "ms-worst")
		})
	}
}

// laneTakeover is one round of BenchmarkLaneTakeover.
func laneTakeover(b *testing.B, crash bool) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	lanes := bus.OrchestratorConsumers()[:bus.TurnPartitions]
	e := newEnv(b, lanes...)
	type handled struct {
		by, id string
		at     time.Time
	}
	got := make(chan handled, 16)
	type replica struct {
		nc   *nats.Conn
		sub  *bus.Subscriber
		stop func()
	}
	start := func(name string) *replica {
		nc := natstest.Connect(b, e.srv, name)
		js, _ := jetstream.New(nc)
		sub := bus.NewSubscriber(js, name, lanes, quiet)
		r, err := bus.NewRouter(name, e.pub, quiet, bus.NewRouterMetrics(prometheus.NewRegistry()))
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range lanes {
			r.AddConsumerHandler(d.Name, d.Name, sub, func(m *message.Message) error {
				got <- handled{by: name, id: m.UUID, at: time.Now()}
				return nil
			})
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		<-r.Running()
		var once sync.Once
		rp := &replica{nc: nc, sub: sub}
		rp.stop = func() {
			once.Do(func() {
				cancel()
				<-done
				_ = sub.Close()
			})
		}
		b.Cleanup(rp.stop)
		return rp
	}
	replicas := map[string]*replica{"a": start("a"), "b": start("b")}
	turn := func(id string) {
		m := bus.NewMessage(id, []byte(`{}`), bus.Headers{Type: "test", Tenant: "t1", Correlation: id})
		if err := e.pub.Publish("purser.turns.t1.c1", m); err != nil {
			b.Fatal(err)
		}
	}
	turn("first")
	first := <-got
	holder := replicas[first.by]
	// A crash comes at any moment between two pulls of the holder.
	time.Sleep(time.Duration(rand.Int64N(int64(time.Second))))
	stopped := time.Now()
	if crash {
		holder.nc.Close()
		go holder.stop()
	} else {
		holder.stop()
	}
	turn("next")
	for h := range got {
		if h.id == "next" {
			if h.by == first.by {
				b.Fatalf("the stopped replica %s handled the next turn", h.by)
			}
			return h.at.Sub(stopped)
		}
	}
	return 0
}
