package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/busauth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/natsembed"
	"github.com/purser-ai/purser/internal/ops"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/services/toolrunner/mailbox"
)

// Demo tenant and user created by Up.
const (
	DemoTenant = "demo"
	DemoUser   = "demo"
)

// Info says how to reach a running Up.
type Info struct {
	HTTPAddr string // host:port actually listened on
	// MetricsAddr serves /metrics: HTTPAddr unless PURSER_METRICS_ADDR is set.
	MetricsAddr string
	NATSURL     string // the embedded server's client URL ("" if not listening)
	// NATSPasswordFile holds the password of the NATS user "admin".
	NATSPasswordFile string
	DemoToken        string // a short-lived token for the demo user
	Secret           []byte // the JWT secret in use
}

// WebsocketURL is the client endpoint.
func (i Info) WebsocketURL() string { return "ws://" + i.HTTPAddr + "/v1/ws" }

// Up runs all four services in one process over an embedded NATS server
// (JetStream in <data>/nats) and SQLite (<data>/purser.db) until ctx ends.
// The data folder and what purser writes in it are private to the user it
// runs as (folders 0700, files 0600), whatever they were before; a folder
// others could read is made private with a warning. ready, when not nil,
// is called once everything is serving.
func Up(ctx context.Context, cfg config.Config, log *slog.Logger, ready func(Info)) error {
	if err := cfg.Check(config.ModeUp); err != nil {
		return err
	}
	if err := privateData(cfg, log); err != nil {
		return err
	}
	var secret []byte
	if cfg.JWKSURL == "" {
		var err error
		if secret, err = Secret(cfg); err != nil {
			return err
		}
	}

	host, portStr, _ := net.SplitHostPort(cfg.NATSListen)
	port, _ := strconv.Atoi(portStr)
	if port == 0 {
		port = -1 // any free port
	}
	// Every NATS client names one of the users generated into the data
	// folder; anonymous clients are refused.
	creds, err := busauth.LoadOrCreate(natsAuthDir(cfg))
	if err != nil {
		return fmt.Errorf("NATS credentials: %w", err)
	}
	users, err := busauth.ServerUsers(creds)
	if err != nil {
		return err
	}
	ns, err := natsembed.Start(natsembed.Options{StoreDir: filepath.Join(cfg.DataDir, "nats"), Host: host, Port: port, ServerName: "purser-up", Users: users})
	if err != nil {
		return fmt.Errorf("embedded NATS on %s: %w", cfg.NATSListen, err)
	}
	defer func() { ns.Shutdown(); ns.WaitForShutdown() }()

	st, err := store.Open(ctx, DSN(cfg))
	if err != nil {
		return fmt.Errorf("open store: %w", err)
	}
	defer st.Close()

	verifier, err := verifierFor(cfg, secret)
	if err != nil {
		return err
	}
	ln := cfg.HTTPListener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
			return fmt.Errorf("PURSER_HTTP_ADDR %s: %w", cfg.HTTPAddr, err)
		}
	}
	defer ln.Close()
	mln, err := listenMetrics(cfg)
	if err != nil {
		return err
	}
	metricsAddr := ln.Addr().String()
	if mln != nil {
		defer mln.Close()
		metricsAddr = mln.Addr().String()
	}

	probe, err := natsembed.Connect(ns, "purser-probe", nats.UserInfo(busauth.Admin, creds[busauth.Admin]))
	if err != nil {
		return fmt.Errorf("connect to embedded NATS: %w", err)
	}
	defer probe.Close()
	if err := ensureStreams(ctx, probe, cfg, log); err != nil {
		return err
	}

	d, flush, err := commonDeps(ctx, cfg, log, probe)
	if err != nil {
		return err
	}
	defer flush()
	reg := d.reg
	reg.MustRegister(st.Collector())
	d.store, d.verifier = st, verifier
	var comps []*component
	for _, mode := range []config.Mode{config.ModeNotifier, config.ModeToolrunner, config.ModeOrchestrator, config.ModeIngress} {
		user := string(mode)
		d.connect = func(name string) (*nats.Conn, error) {
			return natsembed.Connect(ns, name, append(connectionLogs(log), nats.UserInfo(user, creds[user]), nats.CustomInboxPrefix(busauth.InboxPrefix(user)))...)
		}
		c, err := build(ctx, mode, d)
		if err != nil {
			return fmt.Errorf("start %s: %w", mode, err)
		}
		comps = append(comps, c)
	}
	if err := seedDemo(ctx, st, time.Now()); err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	if err := mailbox.WriteDemo(cfg.MailboxPath(), DemoTenant, DemoUser, time.Now()); err != nil {
		return fmt.Errorf("demo mailbox: %w", err)
	}

	info := Info{HTTPAddr: ln.Addr().String(), MetricsAddr: metricsAddr, Secret: secret, NATSPasswordFile: filepath.Join(natsAuthDir(cfg), busauth.Admin)}
	if ns.Addr() != nil {
		info.NATSURL = ns.ClientURL()
	}
	if len(secret) > 0 {
		minter := auth.NewMinter(secret, cfg.JWTIssuer, cfg.JWTAudience, time.Now)
		if info.DemoToken, err = minter.Mint(DemoTenant, DemoUser, []auth.Role{auth.RoleOwner}, 12*time.Hour); err != nil {
			return fmt.Errorf("demo token: %w", err)
		}
	}
	if ready != nil {
		ready(info)
	}
	log.Info("purser is up", "http", info.HTTPAddr, "nats", info.NATSURL, "data", cfg.DataDir)
	checks := []ops.Check{natsCheck(probe), {Name: "store", Probe: st.Ping}}
	return serve(ctx, log, ln, mln, reg, checks, comps, graceOf(cfg))
}

// Secret returns the HS256 signing secret: PURSER_JWT_SECRET, or the one
// Up keeps in <data>/jwt-secret, created with mode 0600 on first use.
func Secret(cfg config.Config) ([]byte, error) {
	if cfg.JWTSecret != "" {
		return []byte(cfg.JWTSecret), nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("PURSER_DATA_DIR: %w", err)
	}
	secret, err := auth.LoadOrCreateSecret(filepath.Join(cfg.DataDir, "jwt-secret"))
	if err != nil {
		return nil, fmt.Errorf("jwt secret: %w", err)
	}
	return secret, nil
}

// DSN is the store to open: DATABASE_URL, or SQLite in the data folder.
func DSN(cfg config.Config) string {
	if cfg.DatabaseURL != "" {
		return cfg.DatabaseURL
	}
	return "sqlite:" + filepath.Join(cfg.DataDir, "purser.db")
}

// PrintInfo writes how to connect, for a person at a terminal.
func PrintInfo(w io.Writer, i Info) {
	fmt.Fprintf(w, "\npurser is up.\n\n")
	if i.DemoToken != "" {
		// The fragment never reaches the server: the page reads the token
		// from it, keeps it in the tab and clears the address bar.
		fmt.Fprintf(w, "  web chat   http://%s/#token=%s\n", i.HTTPAddr, i.DemoToken)
	}
	fmt.Fprintf(w, "  websocket  %s\n", i.WebsocketURL())
	fmt.Fprintf(w, "  chat       go run ./cmd/purser chat --url %s   (or: purser chat)\n", i.WebsocketURL())
	if i.NATSURL != "" {
		fmt.Fprintf(w, "  bus        nats --server %s --user %s --password \"$(cat %s)\" sub 'purser.>'\n", i.NATSURL, busauth.Admin, i.NATSPasswordFile)
		fmt.Fprintf(w, "             (or once: nats context save purser --server %s --user %s --password \"$(cat %s)\" --select)\n", i.NATSURL, busauth.Admin, i.NATSPasswordFile)
	}
	fmt.Fprintf(w, "  metrics    http://%s/metrics\n", i.MetricsAddr)
	if i.DemoToken != "" {
		fmt.Fprintf(w, "\ntoken for tenant %q, user %q (valid 12 h):\n\n%s\n\n", DemoTenant, DemoUser, i.DemoToken)
	}
}
