package app

import (
	"fmt"
	"net"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/ops"
)

// listenMetrics opens PURSER_METRICS_ADDR, /metrics's own listener; nil
// when it is not set (then /metrics is on the HTTP address).
func listenMetrics(cfg config.Config) (net.Listener, error) {
	if cfg.MetricsAddr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("PURSER_METRICS_ADDR %s: %w", cfg.MetricsAddr, err)
	}
	return ln, nil
}

// registerStreamDepth reports the streams' depth (DLQ included) through
// nc, once per process.
func registerStreamDepth(reg prometheus.Registerer, nc *nats.Conn) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	return reg.Register(ops.StreamDepth(js, bus.StreamNames()))
}

// consumerLag reports the lag of a service's consumers.
func consumerLag(js jetstream.JetStream, defs []bus.ConsumerDef) prometheus.Collector {
	refs := make([]ops.ConsumerRef, len(defs))
	for i, d := range defs {
		refs[i] = ops.ConsumerRef{Stream: d.Stream, Name: d.Name}
	}
	return ops.ConsumerLag(js, refs)
}
