package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/ops"
	"github.com/purser-ai/purser/internal/prune"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/tracing"
)

// RunService runs one service against NATS_URL (and DATABASE_URL, but for
// the ingress) until ctx ends. This is how purser runs in deploy/k8s.
func RunService(ctx context.Context, cfg config.Config, mode config.Mode, log *slog.Logger) error {
	return runService(ctx, cfg, mode, log, nil)
}

// runService is RunService; ready, when not nil, gets the HTTP address
// once the service is serving.
func runService(ctx context.Context, cfg config.Config, mode config.Mode, log *slog.Logger, ready func(addr string)) error {
	if err := cfg.Check(mode); err != nil {
		return err
	}
	auth, err := serviceOptions(cfg, string(mode))
	if err != nil {
		return err
	}
	connect := func(name string) (*nats.Conn, error) {
		opts := append([]nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second)}, auth...)
		return nats.Connect(cfg.NATSURL, append(opts, connectionLogs(log)...)...)
	}
	probe, err := connect("purser-" + string(mode) + "-probe")
	if err != nil {
		return fmt.Errorf("NATS_URL: %w", err)
	}
	defer probe.Close()
	if err := waitFor(ctx, log, "JetStream", func(ctx context.Context) error { return ensureStreams(ctx, probe, cfg, log) }); err != nil {
		return err
	}
	d, flush, err := commonDeps(ctx, cfg, log, probe)
	if err != nil {
		return err
	}
	defer flush()
	reg := d.reg
	d.connect = connect
	checks := []ops.Check{natsCheck(probe)}
	if mode != config.ModeIngress {
		var st *store.Store
		err := waitFor(ctx, log, "the database", func(ctx context.Context) (err error) {
			st, err = store.Open(ctx, cfg.DatabaseURL)
			return err
		})
		if err != nil {
			return fmt.Errorf("DATABASE_URL: %w", err)
		}
		defer st.Close()
		d.store = st
		reg.MustRegister(st.Collector())
		checks = append(checks, ops.Check{Name: "store", Probe: st.Ping})
	} else {
		v, err := verifierFor(cfg, []byte(cfg.JWTSecret))
		if err != nil {
			return err
		}
		d.verifier = v
	}
	c, err := build(ctx, mode, d)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("PURSER_HTTP_ADDR %s: %w", cfg.HTTPAddr, err)
	}
	mln, err := listenMetrics(cfg)
	if err != nil {
		ln.Close()
		return err
	}
	metricsAddr := ln.Addr().String()
	if mln != nil {
		defer mln.Close()
		metricsAddr = mln.Addr().String()
	}
	log.Info("service started", "service", mode, "http", ln.Addr().String(), "metrics", metricsAddr)
	if ready != nil {
		ready(ln.Addr().String())
	}
	return serve(ctx, log, ln, mln, reg, checks, []*component{c}, graceOf(cfg))
}

// commonDeps are what every way of running purser gives its services:
// a metrics registry with the streams' depth, the pruning's and the
// routers' metrics, and the trace exporter OTEL_EXPORTER_OTLP_ENDPOINT
// names (flush sends the spans still waiting; call it at the end).
func commonDeps(ctx context.Context, cfg config.Config, log *slog.Logger, probe *nats.Conn) (d deps, flush func(), err error) {
	reg := newRegistry()
	if err := registerStreamDepth(reg, probe); err != nil {
		return deps{}, nil, err
	}
	pm, err := prune.NewMetrics(reg)
	if err != nil {
		return deps{}, nil, err
	}
	traces, err := tracing.FromEnv(ctx, os.Getenv)
	if err != nil {
		return deps{}, nil, err
	}
	d = deps{cfg: cfg, log: log, reg: reg, routerMetrics: bus.NewRouterMetrics(reg), pruneMetrics: pm, now: time.Now, traces: traces}
	return d, func() { flushTraces(ctx, traces, log) }, nil
}

// flushTraces sends the spans still waiting, within a few seconds, once
// the services have stopped.
func flushTraces(ctx context.Context, traces *tracing.Exporter, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := traces.Shutdown(ctx); err != nil {
		log.Warn("traces", "err", err)
	}
}
