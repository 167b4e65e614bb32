// Package app wires purser's services from configuration: one service
// against an external NATS and Postgres (RunService), or all four in one
// process over an embedded NATS and SQLite (Up). cmd/purser only parses
// flags and calls in here.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	openai "github.com/sashabaranov/go-openai"
	"golang.org/x/sync/errgroup"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/ops"
	"github.com/purser-ai/purser/internal/outbox"
	"github.com/purser-ai/purser/internal/prune"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/tracing"
	"github.com/purser-ai/purser/internal/uploads"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/ingress"
	"github.com/purser-ai/purser/services/notifier"
	"github.com/purser-ai/purser/services/orchestrator"
	"github.com/purser-ai/purser/services/orchestrator/llm"
	"github.com/purser-ai/purser/services/orchestrator/offline"
	"github.com/purser-ai/purser/services/toolrunner"
	"github.com/purser-ai/purser/services/toolrunner/statements"
)

// deps is what every service is built from.
type deps struct {
	cfg config.Config
	log *slog.Logger
	reg *prometheus.Registry
	// routerMetrics are shared by the routers of one process.
	routerMetrics *bus.RouterMetrics
	// pruneMetrics are shared by the pruners of one process.
	pruneMetrics *prune.Metrics
	store        *store.Store // nil for the ingress alone
	connect      func(name string) (*nats.Conn, error)
	verifier     ingress.Verifier
	now          func() time.Time
	// traces exports spans (nil: none are made); tracer is the service's.
	traces *tracing.Exporter
	tracer tracing.Tracer
}

// component is one running service.
type component struct {
	name   string
	routes func(mux *http.ServeMux)
	// run serves until ctx ends, then waits for httpStopped (the HTTP
	// server took its last request and those in flight ended) and stops:
	// it finishes or hands back the work it holds, within the
	// configured grace, and returns.
	run func(ctx context.Context, httpStopped <-chan struct{}) error
}

// build creates the service named by mode. Connections it opens are closed
// when run returns.
func build(ctx context.Context, mode config.Mode, d deps) (*component, error) {
	nc, err := d.connect("purser-" + string(mode))
	if err != nil {
		return nil, fmt.Errorf("connect to NATS: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	log := d.log.With("service", string(mode))
	closeConn := func() { _ = nc.Drain() }
	if d.tracer, err = d.traces.Tracer(string(mode)); err != nil {
		closeConn()
		return nil, err
	}
	pub := d.tracer.Publisher(bus.NewPublisher(nc, js))

	switch mode {
	case config.ModeIngress:
		in := ingress.New(ingress.Config{AllowedOrigins: d.cfg.AllowedOrigins, MaxUploadBytes: int64(d.cfg.MaxUploadMiB) << 20,
			UploadsPerMinute: float64(d.cfg.UploadsPerMinute), UploadBurst: d.cfg.UploadsPerMinute}, d.verifier, nc, pub, ingress.NewMetrics(d.reg), log, d.now)
		in.WithUploads(uploads.New(js))
		in.WithTracing(d.tracer)
		return &component{name: string(mode), routes: in.Routes, run: func(ctx context.Context, httpStopped <-chan struct{}) error {
			<-ctx.Done()
			// HTTP turns in flight have had their answers (the connection
			// is still up for them); sockets go now, told to reconnect at
			// once elsewhere, and their frames to come reach them there.
			<-httpStopped
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), socketsCloseTimeout)
			defer cancel()
			in.Shutdown(sctx)
			closeConn()
			return nil
		}}, nil
	case config.ModeOrchestrator:
		model, err := modelFor(d.cfg, d.reg, log, d.tracer)
		if err != nil {
			closeConn()
			return nil, err
		}
		relay := outbox.NewRelay(d.store, pub, log, d.now)
		relay.Retention = d.cfg.OutboxRetention
		orch := orchestrator.New(orchestrator.Config{ModelConcurrency: d.cfg.ModelConcurrency, ProposalTTL: d.cfg.ProposalTTL, Tracer: d.tracer}, d.store, relay, pub, model, d.reg, log, d.now)
		prune, err := pruner(mode, d, relay)
		if err != nil {
			closeConn()
			return nil, err
		}
		return routed(ctx, mode, d, nc, js, pub, log, closeConn, bus.OrchestratorConsumers(), orch.Register, relay,
			func(ctx context.Context) { orch.Sweep(ctx, 5*time.Second) }, prune)
	case config.ModeNotifier:
		n := notifier.New(d.store, pub, d.reg, log, d.now).WithSearch(searcherFor(d.cfg, d.store, d.reg, log), d.store).WithTracing(d.tracer)
		// Catch-up and inbox requests from the ingress; they stop, and
		// those being answered finish, before the connection drains (and
		// before the store closes).
		resp, err := n.Respond(nc)
		if err != nil {
			closeConn()
			return nil, err
		}
		stop := func() { resp.Close(); closeConn() }
		prune, err := pruner(mode, d, nil)
		if err != nil {
			stop()
			return nil, err
		}
		return routed(ctx, mode, d, nc, js, pub, log, stop, bus.NotifierConsumers(), n.Register, nil, prune)
	case config.ModeToolrunner:
		mail, err := mailFor(d.cfg, d.store, nc, pub, log, d.now)
		if err != nil {
			closeConn()
			return nil, err
		}
		exe, err := os.Executable()
		if err != nil {
			closeConn()
			return nil, fmt.Errorf("import worker: %w", err)
		}
		// Statements are parsed in a sandboxed child process, for imports
		// and for the previews a search shows before the yes.
		parser := statements.Parser{Sandbox: &statements.Sandbox{Command: []string{exe, ImportWorkerCommand}}}
		all := append(toolrunner.Catalog(), toolrunner.MailTools(mail, &toolrunner.Previewer{Parser: parser, Hints: toolrunner.StatementHints(d.store)})...)
		// Uploaded files: read, imported, or kept with the expense read
		// from them (which replaces the catalog's add_expense).
		up := &toolrunner.Uploads{Source: uploads.New(js), Reader: parser, Hints: toolrunner.StatementHints(d.store)}
		if d.cfg.VisionModel != "" {
			oc := openai.DefaultConfig(d.cfg.OpenAIKey)
			if d.cfg.OpenAIBaseURL != "" {
				oc.BaseURL = d.cfg.OpenAIBaseURL
			}
			v, err := toolrunner.NewVisionReader(openai.NewClientWithConfig(oc), d.cfg.VisionModel, parser, d.reg)
			if err != nil {
				closeConn()
				return nil, err
			}
			up.Reader = v
		}
		all = slices.DeleteFunc(all, func(t toolrunner.Tool) bool { return t.Name == contracts.ToolAddExpense })
		all = append(all, up.Tools(toolrunner.AddExpenseTool())...)
		// Search semantic too when an embeddings server is configured.
		all = slices.DeleteFunc(all, func(t toolrunner.Tool) bool { return t.Name == contracts.ToolSearch })
		all = append(all, searcherFor(d.cfg, d.store, d.reg, log).Tool())
		tools := toolrunner.Select(all, d.cfg.Tools)
		if len(tools) == 0 {
			closeConn()
			return nil, fmt.Errorf("PURSER_TOOLS: none of %v is a tool this toolrunner has", d.cfg.Tools)
		}
		tunables, _ := d.cfg.StreamTunables() // checked at start
		var limiter *toolrunner.KVLimiter
		err = waitFor(ctx, log, "the rate-limit bucket", func(ctx context.Context) (err error) {
			limiter, err = toolrunner.NewKVLimiter(ctx, js, tunables.Replicas)
			return err
		})
		if err != nil {
			closeConn()
			return nil, fmt.Errorf("rate limiter: %w", err)
		}
		runner := toolrunner.New(tools, toolrunner.FromStore(d.store), limiter, pub, toolrunner.NewMetrics(d.reg), log, d.now)
		runner.WithTracing(d.tracer)
		var consumers []bus.ConsumerDef
		for _, name := range runner.Names() {
			consumers = append(consumers, bus.ToolConsumer(name))
		}
		register := runner.Register
		background := []func(context.Context){searchIndexer(d.cfg, d.store, d.reg, log)}
		if importsHere(d.cfg.Tools) {
			imp := toolrunner.NewImporter(d.store, parser, pub, d.reg, log, d.now)
			imp.Hints = toolrunner.StatementHints(d.store)
			consumers = append(consumers, bus.ImportConsumer())
			register = func(r *message.Router, sub message.Subscriber) {
				runner.Register(r, sub)
				imp.Register(r, sub)
			}
			background = append(background, func(ctx context.Context) { imp.Sweep(ctx, time.Minute, 5*time.Minute) })
		}
		if days := d.cfg.FileRetentionDays; days > 0 && importsHere(d.cfg.Tools) {
			prune, err := filePruner(d.store, time.Duration(days)*24*time.Hour, d.reg, log, d.now)
			if err != nil {
				closeConn()
				return nil, err
			}
			background = append(background, prune)
		}
		prune, err := pruner(mode, d, nil)
		if err != nil {
			closeConn()
			return nil, err
		}
		background = append(background, prune)
		return routed(ctx, mode, d, nc, js, pub, log, closeConn, consumers, register, nil, background...)
	}
	closeConn()
	return nil, fmt.Errorf("unknown service %q", mode)
}

// routed builds a service that consumes through a watermill router.
func routed(ctx context.Context, mode config.Mode, d deps, nc *nats.Conn, js jetstream.JetStream, pub message.Publisher, log *slog.Logger,
	closeConn func(), consumers []bus.ConsumerDef, register func(*message.Router, message.Subscriber), relay *outbox.Relay,
	background ...func(ctx context.Context)) (*component, error) {
	if err := waitFor(ctx, log, "JetStream's consumers", func(ctx context.Context) error { return bus.Provision(ctx, js, consumers...) }); err != nil {
		closeConn()
		return nil, fmt.Errorf("provision streams: %w", err)
	}
	if err := d.reg.Register(consumerLag(js, consumers)); err != nil {
		closeConn()
		return nil, fmt.Errorf("consumer lag metrics: %w", err)
	}
	sub := bus.NewSubscriber(js, string(mode), consumers, log)
	if d.cfg.ConsumerConcurrency > 0 {
		sub.WithConcurrency(d.cfg.ConsumerConcurrency)
	}
	router, err := bus.NewRouter(string(mode), pub, log, d.routerMetrics)
	if err != nil {
		closeConn()
		return nil, err
	}
	router.AddMiddleware(d.tracer.Consume())
	register(router, sub)
	return &component{name: string(mode), run: func(ctx context.Context, httpStopped <-chan struct{}) error {
		// The router, the relay and the background work outlive ctx: they
		// stop once the subscriber has drained.
		life, stop := context.WithCancel(context.WithoutCancel(ctx))
		defer stop()
		g, gctx := errgroup.WithContext(life)
		g.Go(func() error {
			err := router.Run(gctx)
			if err != nil && ctx.Err() != nil {
				// Stopped before it had subscribed everything (a stop
				// right after the start): the drain closed the subscriber
				// under it, which is the stop, not a failure.
				log.Info("shutdown: stopped while subscribing", "err", err)
				return nil
			}
			return err
		})
		if relay != nil {
			g.Go(func() error { return relay.Run(gctx, time.Second) })
		}
		for _, f := range background {
			g.Go(func() error { f(gctx); return nil })
		}
		g.Go(func() error {
			select {
			case <-ctx.Done():
			case <-gctx.Done():
				return nil
			}
			select {
			case <-httpStopped:
			case <-gctx.Done():
				return nil
			}
			drainCtx(ctx, graceOf(d.cfg), log, sub)
			stop()
			return nil
		})
		err := g.Wait()
		_ = sub.Close()
		if relay != nil {
			// Whatever was stored and not yet published goes out now
			// rather than from another replica's relay later.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			if ferr := relay.Flush(fctx); ferr != nil {
				log.Warn("shutdown: outbox flush", "err", ferr)
			}
			cancel()
		}
		closeConn()
		return err
	}}, nil
}

// graceOf is the configured shutdown grace, 10 s when none is.
func graceOf(cfg config.Config) time.Duration {
	if cfg.ShutdownGrace > 0 {
		return cfg.ShutdownGrace
	}
	return 10 * time.Second
}

// socketsCloseTimeout bounds the wait for sockets to close at shutdown.
const socketsCloseTimeout = 5 * time.Second

// drainCtx drains sub for at most grace, saying what it handed back.
func drainCtx(ctx context.Context, grace time.Duration, log *slog.Logger, sub *bus.Subscriber) {
	start := time.Now()
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	if err := sub.Drain(dctx); err != nil {
		log.Warn("shutdown: work still running after the grace was handed back to the bus", "grace", grace)
		return
	}
	log.Info("shutdown: drained", "took", time.Since(start).Round(time.Millisecond))
}

// noSniff has every answer of h, whatever its route or status, say
// X-Content-Type-Options: nosniff, so that no browser reads a JSON answer
// (or any other) as something its Content-Type does not say.
func noSniff(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}

// serve runs the components and one HTTP server until ctx ends, then shuts
// down: /readyz answers 503 at once, the HTTP server stops taking
// requests and lets those in flight end (within grace), then each
// component stops: sockets close with 1012, subscribers stop pulling and
// finish or hand back what they hold (within grace), outboxes flush,
// connections drain. /metrics is served on metricsLn when it is not nil,
// else on ln.
func serve(ctx context.Context, log *slog.Logger, ln, metricsLn net.Listener, reg *prometheus.Registry, checks []ops.Check, comps []*component, grace time.Duration) error {
	mux := http.NewServeMux()
	var stopping atomic.Bool
	checks = append(checks, ops.Check{Name: "shutdown", Probe: func(context.Context) error {
		if stopping.Load() {
			return errors.New("shutting down")
		}
		return nil
	}})
	ops.HealthRoutes(mux, checks...)
	servers := map[net.Listener]*http.Server{ln: {Handler: noSniff(mux), ReadHeaderTimeout: 10 * time.Second}}
	if metricsLn != nil {
		mmux := http.NewServeMux()
		ops.MetricsRoutes(mmux, reg)
		servers[metricsLn] = &http.Server{Handler: noSniff(mmux), ReadHeaderTimeout: 10 * time.Second}
	} else {
		ops.MetricsRoutes(mux, reg)
	}
	for _, c := range comps {
		if c.routes != nil {
			c.routes(mux)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	httpStopped := make(chan struct{})
	for _, c := range comps {
		g.Go(func() error {
			if err := c.run(gctx, httpStopped); err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			return nil
		})
	}
	for l, srv := range servers {
		g.Go(func() error {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("http %s: %w", l.Addr(), err)
			}
			return nil
		})
	}
	g.Go(func() error {
		<-gctx.Done()
		stopping.Store(true)
		defer close(httpStopped)
		sctx, cancel := context.WithTimeout(context.WithoutCancel(gctx), grace)
		defer cancel()
		log.Info("shutting down", "grace", grace)
		var errs []error
		for _, srv := range servers {
			if err := srv.Shutdown(sctx); err != nil {
				// Requests still running past the grace end with the process.
				errs = append(errs, fmt.Errorf("http %s: %w", srv.Addr, err))
			}
		}
		if err := errors.Join(errs...); err != nil {
			log.Warn("shutdown: HTTP requests still running after the grace", "err", err)
		}
		return nil
	})
	return g.Wait()
}

func newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), ops.BuildInfo())
	return reg
}

func natsCheck(nc *nats.Conn) ops.Check {
	return ops.Check{Name: "nats", Probe: func(ctx context.Context) error {
		if !nc.IsConnected() {
			return errors.New("not connected")
		}
		return nc.FlushWithContext(ctx)
	}}
}

func verifierFor(cfg config.Config, secret []byte) (*auth.Verifier, error) {
	return auth.NewVerifier(auth.Config{Secret: secret, JWKSURL: cfg.JWKSURL, Issuer: cfg.JWTIssuer, Audience: cfg.JWTAudience})
}

// modelFor is the model server named by the configuration, or the offline
// model when there is none; start-up says which.
func modelFor(cfg config.Config, reg prometheus.Registerer, log *slog.Logger, tr tracing.Tracer) (orchestrator.Model, error) {
	if !cfg.UsesModelServer() {
		log.Info("model: the offline rule-based model (set OPENAI_API_KEY or OPENAI_BASE_URL to use a model server)")
		return offline.Model{}, nil
	}
	m, err := llm.New(llm.Config{APIKey: cfg.OpenAIKey, BaseURL: cfg.OpenAIBaseURL, Model: cfg.ModelName, Protocol: cfg.ModelProtocol,
		Concurrency: cfg.ModelConcurrency, Registerer: reg, Logger: log, Tracer: tr})
	if err != nil {
		return nil, err
	}
	endpoint := cfg.OpenAIBaseURL
	if endpoint == "" {
		endpoint = "https://api.openai.com/v1"
	}
	log.Info("model: "+cfg.ModelName, "endpoint", endpoint, "protocol", m.Protocol())
	return m, nil
}

// importsHere reports whether this toolrunner imports statements: all do
// unless --tools names a subset without fetch_email_attachments, so that
// the heavy work can run on replicas of its own.
func importsHere(tools []string) bool {
	return len(tools) == 0 || slices.Contains(tools, contracts.ToolFetchEmailAttachments)
}

// filePruner drops, every hour, the files of documents older than
// retention (their records stay), counting them in
// purser_document_files_pruned_total.
func filePruner(st *store.Store, retention time.Duration, reg prometheus.Registerer, log *slog.Logger, now func() time.Time) (func(context.Context), error) {
	pruned := prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_document_files_pruned_total",
		Help: "Files of documents dropped past PURSER_FILE_RETENTION_DAYS (the document records stay)."})
	if err := reg.Register(pruned); err != nil {
		return nil, err
	}
	return func(ctx context.Context) {
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			n, err := st.ForgetDocumentFiles(ctx, now().Add(-retention), now())
			if err != nil && ctx.Err() == nil {
				log.Error("file retention", "err", err)
			}
			pruned.Add(float64(n))
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}, nil
}
