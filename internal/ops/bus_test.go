package ops_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/ops"
)

func gauges(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += " " + l.GetName() + "=" + l.GetValue()
			}
			out[key] = m.GetGauge().GetValue()
		}
	}
	return out
}

func TestConsumerLagAndStreamDepth(t *testing.T) {
	_, nc := natstest.Start(t)
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "DLQ", Subjects: []string{"d.>"}}); err != nil {
		t.Fatal(err)
	}
	cons, err := js.CreateOrUpdateConsumer(ctx, "DLQ", jetstream.ConsumerConfig{Durable: "reader", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := js.Publish(ctx, "d.x", []byte("dead")); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(ops.ConsumerLag(js, []ops.ConsumerRef{{Stream: "DLQ", Name: "reader"}, {Stream: "DLQ", Name: "missing"}}),
		ops.StreamDepth(js, []string{"DLQ", "NOPE"}))

	// The server counts a consumer's pending messages after it stores
	// them, so the count may trail the publish acks for a moment.
	g := waitGauges(t, reg, func(g map[string]float64) bool {
		return g["purser_bus_consumer_pending consumer=reader stream=DLQ"] == 3 && g["purser_bus_stream_messages stream=DLQ"] == 3
	}, "before any delivery")
	if _, ok := g["purser_bus_consumer_pending consumer=missing stream=DLQ"]; ok {
		t.Error("a consumer that does not exist has a lag")
	}
	if _, err := cons.Next(); err != nil {
		t.Fatal(err)
	}
	waitGauges(t, reg, func(g map[string]float64) bool {
		return g["purser_bus_consumer_pending consumer=reader stream=DLQ"] == 2 && g["purser_bus_consumer_ack_pending consumer=reader stream=DLQ"] == 1
	}, "after one unacknowledged delivery")
}

// waitGauges gathers until ok holds, failing with the last figures seen
// when it still does not after a few seconds.
func waitGauges(t *testing.T, reg *prometheus.Registry, ok func(map[string]float64) bool, when string) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		g := gauges(t, reg)
		if ok(g) {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", when, g)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
