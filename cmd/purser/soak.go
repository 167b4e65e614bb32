package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bench"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store"
)

// soakCmd drives many turns through purser started in this process, with
// the pruners on a short schedule, and prints at checkpoints how many
// bytes the engine's tables and the people's tables hold: the first must
// level off, the second grow with the turns.
func soakCmd(cfg *config.Config, stdout, stderr io.Writer) *cobra.Command {
	var (
		turns, every, users             int
		db, mix, upLog, streamAge       string
		pruneEvery, outboxKeep, propTTL time.Duration
		pause                           time.Duration
	)
	cmd := &cobra.Command{
		Use:   "soak",
		Short: "Drive --turns turns through purser in this process and show that engine state stays bounded while people's data grows",
		Long: `soak starts purser in this process (embedded NATS, SQLite in a fresh folder,
or --db postgres://... which should name an empty database), with the offline
model and every pruner running every --prune-interval, then drives --turns turns
from --users websocket users as 'purser bench' does (a read question, an add
proposed then approved, a clarifying question). Every --every turns it prints
the bytes the engine's tables (outbox, tool_calls, proposals, search_queue) and
the people's tables (frames, ledger, audit, search index, ...) hold, in all and
per turn since the last checkpoint, and the rows pruned so far.

To see pruning within minutes rather than days, the soak shortens what sets
the engine's windows: every stream keeps messages --stream-max-age (so stored
tool results and expired proposals go after twice that), a proposal waits
--proposal-ttl, a published outbox message is kept --outbox-retention. The
people's tables have no retention here: they grow with every turn.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			kinds, err := parseMix(mix)
			if err != nil {
				return err
			}
			if turns < 1 || every < 1 || users < 1 {
				return errors.New("--turns, --every and --users must be positive")
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(upLog)); err != nil {
				return fmt.Errorf("--up-log %q: want debug, info, warn or error", upLog)
			}
			dir, err := os.MkdirTemp("", "purser-soak-*")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			c := *cfg
			c.DataDir, c.HTTPAddr, c.NATSListen, c.MetricsAddr = dir, "127.0.0.1:0", "127.0.0.1:0", ""
			c.Model, c.OpenAIBaseURL, c.OpenAIKey = "offline", "", ""
			c.DatabaseURL = db
			c.PruneInterval, c.OutboxRetention, c.ProposalTTL, c.StreamMaxAge = pruneEvery, outboxKeep, propTTL, streamAge
			if err := c.Check(config.ModeUp); err != nil {
				return err
			}

			ctx, stop := context.WithCancel(cmd.Context())
			defer stop()
			g, gctx := errgroup.WithContext(ctx)
			ready := make(chan app.Info, 1)
			log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
			g.Go(func() error { return app.Up(gctx, c, log, func(i app.Info) { ready <- i }) })
			var info app.Info
			select {
			case info = <-ready:
			case <-gctx.Done():
				return g.Wait()
			}
			st, err := store.Open(gctx, app.DSN(c))
			if err != nil {
				stop()
				return errors.Join(err, g.Wait())
			}
			defer st.Close()
			engine := "SQLite"
			if st.Dialect() == "postgres" {
				engine = "Postgres"
			}
			minter := auth.NewMinter(info.Secret, c.JWTIssuer, c.JWTAudience, time.Now)
			tokens := make([]string, users)
			for i := range tokens {
				if tokens[i], err = minter.Mint(fmt.Sprintf("soak%d", i%max(1, users/10)), fmt.Sprintf("u%d", i), []auth.Role{auth.RoleMember}, 24*time.Hour); err != nil {
					stop()
					return errors.Join(err, g.Wait())
				}
			}
			fmt.Fprintf(stdout, "purser up in this process (%s, offline model); %d users, mix %s; pruning every %s, streams keep %s, outbox %s, proposals wait %s\n",
				engine, users, mix, pruneEvery, streamAge, outboxKeep, propTTL)
			fmt.Fprintf(stdout, "%7s %7s  %11s %11s  %11s %11s  %s\n", "turns", "elapsed", "engine KB", "B/turn now", "people KB", "B/turn now", "engine tables (KB) · rows pruned so far")

			metricsURL := "http://" + info.MetricsAddr + "/metrics"
			cp := &checkpoints{out: stdout, st: st, metricsURL: metricsURL, start: time.Now()}
			next := every
			var runErr error
			res, runErr := bench.Run(gctx, bench.Options{URL: info.WebsocketURL(), Token: func(i int) string { return tokens[i] }, Users: users,
				Duration: 24 * time.Hour, Pause: pause, Ramp: 2 * time.Second, Mix: kinds, Label: fmt.Sprintf("s%d", time.Now().Unix()%100000), Turns: turns,
				Progress: func(p bench.Progress) {
					if done := p.Turns + p.Errors; done >= next {
						cp.measure(gctx, done)
						for next <= done {
							next += every
						}
					}
				}})
			cp.measure(gctx, res.Turns+res.Errors)
			fmt.Fprintln(stdout)
			bench.Report(stdout, "soak", res)
			stop()
			err = g.Wait()
			if errors.Is(err, context.Canceled) {
				err = nil
			}
			if errors.Is(runErr, context.Canceled) {
				runErr = nil
			}
			return errors.Join(runErr, err, cp.err)
		},
	}
	f := cmd.Flags()
	f.IntVar(&turns, "turns", 50000, "turns to drive")
	f.IntVar(&every, "every", 5000, "print the tables' bytes every this many turns")
	f.IntVar(&users, "users", 200, "websocket users, each in a conversation of its own")
	f.DurationVar(&pause, "pause", 600*time.Millisecond, "pause after each turn (a user may send 2 turns a second)")
	f.StringVar(&db, "db", "", "a postgres:// URL of an empty database (default: SQLite in a fresh folder)")
	f.StringVar(&mix, "mix", "read,add,clarify", "turn kinds each user cycles through: read, add (with approve), clarify")
	f.DurationVar(&pruneEvery, "prune-interval", 5*time.Second, "how often every pruner runs")
	f.StringVar(&streamAge, "stream-max-age", "2m", "how long every stream keeps a message, at least the 2-minute duplicate window (sets the exactly-once windows)")
	f.DurationVar(&outboxKeep, "outbox-retention", 2*time.Minute, "how long a published outbox message is kept")
	f.DurationVar(&propTTL, "proposal-ttl", time.Minute, "how long a proposal waits for a yes")
	f.StringVar(&upLog, "up-log", "error", "what the purser started here logs")
	return cmd
}

// checkpoints measures and prints the tables at each checkpoint.
type checkpoints struct {
	out        io.Writer
	st         *store.Store
	metricsURL string
	start      time.Time

	lastTurns          int
	lastEngine, lastPp int64
	err                error
}

func (c *checkpoints) measure(ctx context.Context, turns int) {
	if turns <= c.lastTurns {
		return
	}
	sizes, err := c.st.TableBytes(ctx)
	if err != nil {
		c.err = errors.Join(c.err, err)
		return
	}
	var engine, people int64
	var parts []string
	for _, t := range store.EngineTables {
		engine += sizes[t]
		parts = append(parts, fmt.Sprintf("%s %.0f", t, float64(sizes[t])/1024))
	}
	for t, n := range sizes {
		if !slices.Contains(store.EngineTables, t) && t != "goose_db_version" && t != "sqlite_sequence" {
			people += n
		}
	}
	pruned, err := prunedRows(ctx, c.metricsURL)
	if err != nil {
		c.err = errors.Join(c.err, err)
	}
	var pr []string
	for _, t := range slices.Sorted(func(yield func(string) bool) {
		for t := range pruned {
			if !yield(t) {
				return
			}
		}
	}) {
		pr = append(pr, fmt.Sprintf("%s %.0f", t, pruned[t]))
	}
	dt := float64(turns - c.lastTurns)
	fmt.Fprintf(c.out, "\n%7d %6.0fs  %11.0f %11.0f  %11.0f %11.0f  %s · %s",
		turns, time.Since(c.start).Seconds(), float64(engine)/1024, float64(engine-c.lastEngine)/dt,
		float64(people)/1024, float64(people-c.lastPp)/dt, strings.Join(parts, ", "), strings.Join(pr, ", "))
	c.lastTurns, c.lastEngine, c.lastPp = turns, engine, people
}

// prunedRows reads purser_pruned_rows_total by table from /metrics.
func prunedRows(ctx context.Context, url string) (map[string]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), `purser_pruned_rows_total{table="`)
		if !ok {
			continue
		}
		table, value, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[table] = v
		}
	}
	return out, sc.Err()
}
