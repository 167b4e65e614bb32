package bus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
)

// BenchmarkHop measures one message's trip publish → durable consumer →
// handler → ack, one at a time, through purser's bus and through bare
// nats.go jetstream calls on the same server in the same run. The ratio
// of the two is the bus's overhead.
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
		b.ResetTimer()
		for i := range b.N {
			if _, err := js.Publish(ctx, "purser.notify.t1.u1", []byte(`{"n":1}`), jetstream.WithMsgID(fmt.Sprintf("raw-%d", i))); err != nil {
				b.Fatal(err)
			}
			<-got
		}
	})
	b.Run("purser-bus", func(b *testing.B) {
		def := benchConsumer()
		be := newEnv(b, def)
		got := make(chan struct{}, 1)
		be.serve("bench", def, func(m *message.Message) error { got <- struct{}{}; return nil })
		b.ResetTimer()
		for i := range b.N {
			m := bus.NewMessage(fmt.Sprintf("bus-%d", i), []byte(`{"n":1}`), bus.Headers{Type: "bench", Tenant: "t1"})
			if err := be.pub.Publish("purser.notify.t1.u1", m); err != nil {
				b.Fatal(err)
			}
			<-got
		}
	})
}

func benchConsumer() bus.ConsumerDef {
	return bus.ConsumerDef{Name: "bench", Stream: bus.StreamNotify, Filter: "purser.notify.>", AckWait: 30 * time.Second, MaxDeliver: 3, MaxAckPending: 1}
}
