package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/busauth"
	"github.com/purser-ai/purser/internal/config"
)

// ensureStreams creates the streams that are missing with the configured
// tunables and checks the others, changing none; a setting an operator
// changed is logged and kept. It fails when a setting purser depends on
// differs.
func ensureStreams(ctx context.Context, nc *nats.Conn, cfg config.Config, log *slog.Logger) error {
	t, err := cfg.StreamTunables()
	if err != nil {
		return err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	plans, err := bus.EnsureStreams(ctx, js, t)
	for _, p := range plans {
		if p.Missing {
			log.Info("stream created", "stream", p.Name, "replicas", p.Want.Replicas, "max_bytes", bus.FormatBytes(p.Want.MaxBytes), "max_age", bus.FormatAge(p.Want.MaxAge))
			continue
		}
		for _, c := range p.Tunable {
			log.Info("stream setting kept as it is on the server; `purser streams apply` would change it",
				"stream", p.Name, "setting", c.Setting, "server", c.Have, "configured", c.Want)
		}
	}
	return err
}

// StreamsApply prints how each stream differs from purser's definitions
// and the configured tunables, then, unless dryRun, makes it so. It
// connects to NATS_URL with the configured credentials (a user allowed to
// update streams: the admin), or to the NATS server of a running `purser
// up` as its admin.
func StreamsApply(ctx context.Context, cfg config.Config, out io.Writer, dryRun bool) error {
	t, err := cfg.StreamTunables()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, 30*time.Second, errors.New("NATS did not answer within 30 s"))
	defer cancel()
	// A request the server refuses gets no reply: stop at the server's
	// permission violation rather than waiting for the timeout.
	denied, deny := context.WithCancelCause(ctx)
	defer deny(nil)
	nc, err := adminConnect(cfg, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			deny(fmt.Errorf("this NATS user may not do that (%w); run as the admin user", err))
		}
	}))
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	ctx = denied
	plans, err := bus.PlanStreams(ctx, js, t)
	if err != nil {
		return withCause(ctx, err)
	}
	changed := PrintStreamPlans(out, plans)
	switch {
	case changed == 0:
		fmt.Fprintln(out, "every stream matches; nothing to do")
		return nil
	case dryRun:
		fmt.Fprintf(out, "%d stream(s) would change; run without --dry-run to apply\n", changed)
		return nil
	}
	if err := bus.ApplyStreams(ctx, js, plans); err != nil {
		return withCause(ctx, err)
	}
	fmt.Fprintf(out, "%d stream(s) changed\n", changed)
	return nil
}

// PrintStreamPlans writes one line per difference and returns how many
// streams would change.
func PrintStreamPlans(out io.Writer, plans []bus.StreamPlan) int {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	changed := 0
	for _, p := range plans {
		switch {
		case p.Missing:
			fmt.Fprintf(tw, "%s\tmissing\tcreate with replicas %d, max_bytes %s, max_age %s\n", p.Name, p.Want.Replicas, bus.FormatBytes(p.Want.MaxBytes), bus.FormatAge(p.Want.MaxAge))
		case !p.Changed():
			fmt.Fprintf(tw, "%s\tunchanged\t\n", p.Name)
		default:
			for _, c := range append(append([]bus.Change(nil), p.Required...), p.Tunable...) {
				fmt.Fprintf(tw, "%s\t%s\t%s -> %s\n", p.Name, c.Setting, c.Have, c.Want)
			}
		}
		if p.Changed() {
			changed++
		}
	}
	_ = tw.Flush()
	return changed
}

// adminConnect connects for an operator's command: to NATS_URL with the
// configured credentials, or else to `purser up`'s server on
// PURSER_NATS_LISTEN.
func adminConnect(cfg config.Config, extra ...nats.Option) (*nats.Conn, error) {
	url := cfg.NATSURL
	opts := append([]nats.Option{nats.Name("purser-admin"), nats.Timeout(5 * time.Second)}, extra...)
	if url == "" {
		url = "nats://" + net.JoinHostPort(hostPort(cfg.NATSListen))
		creds, err := os.ReadFile(filepath.Join(natsAuthDir(cfg), busauth.Admin))
		if err != nil {
			return nil, fmt.Errorf("NATS_URL is not set and 'purser up' has no admin password in %s: %w", natsAuthDir(cfg), err)
		}
		opts = append(opts, nats.UserInfo(busauth.Admin, strings.TrimSpace(string(creds))))
	} else {
		auth, err := credentialOptions(cfg)
		if err != nil {
			return nil, err
		}
		opts = append(opts, auth...)
		if cfg.NATSUser != "" {
			// The replies a user may read are under its own prefix.
			opts = append(opts, nats.CustomInboxPrefix(busauth.InboxPrefix(cfg.NATSUser)))
		}
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	return nc, nil
}

func hostPort(addr string) (string, string) {
	h, p, _ := net.SplitHostPort(addr)
	if h == "" || h == "0.0.0.0" || h == "::" {
		h = "127.0.0.1"
	}
	return h, p
}

// withCause replaces a context error with the reason the context ended.
func withCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
		return cause
	}
	return err
}
