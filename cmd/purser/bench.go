package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // --debug-addr
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bench"
	"github.com/purser-ai/purser/internal/config"
)

// benchCmd drives purser with many websocket users, then the same load
// through a bare JetStream pipeline, and prints both and their ratio.
func benchCmd(cfg *config.Config, stdout, stderr io.Writer) *cobra.Command {
	var (
		url, token, tenant, mix, stubAddr string
		cpuProfile, debugAddr, upLog      string
		users, tenants                    int
		growthUsers, growthMessages       int
		duration, pause, ramp, latency    time.Duration
		up, baseline                      bool
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Load-test a running purser (or one started here with --up) with many websocket users, against a bare JetStream baseline",
		Long: `bench connects --users websocket users, each in a conversation of its own, each
sending a turn, waiting for the frame that ends it, pausing --pause, and sending
the next, for --duration: in turn a read question (a tool runs, then the
answer), an add that is proposed and then approved (two turns), and a request
answered with a clarifying question. It prints turns served per second and
end-to-end and first-token latencies, then the same load through a bare
pipeline (websocket -> JetStream -> worker -> JetStream -> websocket, no state,
the same model time) and the ratio between them.

Tokens are minted for users u0..uN-1 spread over --tenants tenants (named
--tenant0, --tenant1, ...), with the secret of PURSER_DATA_DIR (or
PURSER_JWT_SECRET), unless --token is given.

--up starts purser in this process on a fresh data folder (SQLite, or
DATABASE_URL when set), with the offline model, or with a built-in
OpenAI-compatible stub model when --model-latency is set. Against a purser
started elsewhere, --stub-model ADDR serves the stub for it to use
(OPENAI_BASE_URL=http://ADDR/v1 PURSER_MODEL=openai).

At the end it prints what a turn costs against the baseline: CPU a turn
and their ratio, and bytes written to storage a turn (on Postgres, with
--up and DATABASE_URL, the growth of the server's write-ahead log too, and
with the pg_walinspect extension in the database what of it was that
database's own, read from the log that a temporary replication slot keeps
while the bench runs).
With the stub model, each message ends with a tag naming its conversation
and number, which the stub reads and decides without: it logs its calls by
them, so the bench prints the first token's p50 against the model's own
time on the same turns, and, after the timed run, --growth-users users
send --growth-messages messages each (pausing 700ms, under the per-user
rate limit of 2 frames a second with an add's approval) and it prints the
prompt tokens a turn at the second message against the last.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			kinds, err := parseMix(mix)
			if err != nil {
				return err
			}
			if debugAddr != "" {
				// net/http/pprof registers on the default mux.
				ln, err := net.Listen("tcp", debugAddr)
				if err != nil {
					return err
				}
				dbg := &http.Server{Handler: http.DefaultServeMux, ReadHeaderTimeout: 10 * time.Second}
				defer dbg.Close()
				go func() { _ = dbg.Serve(ln) }()
			}
			if cpuProfile != "" {
				f, err := os.Create(cpuProfile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			g, gctx := errgroup.WithContext(ctx)
			stopServers := make(chan struct{})
			calls := &bench.CallLog{} // the stub model's
			serveStub := func(addr string) (string, error) {
				ln, err := net.Listen("tcp", addr)
				if err != nil {
					return "", fmt.Errorf("stub model on %s: %w", addr, err)
				}
				srv := &http.Server{Handler: bench.StubModel{Latency: latency, Calls: calls}, ReadHeaderTimeout: 10 * time.Second}
				g.Go(func() error {
					<-stopServers
					return srv.Close()
				})
				g.Go(func() error {
					if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
						return err
					}
					return nil
				})
				return "http://" + ln.Addr().String() + "/v1", nil
			}
			var stubURL, metricsURL string // metricsURL: the /metrics of purser up in this process
			if stubAddr != "" || (up && latency > 0) {
				addr := stubAddr
				if addr == "" {
					addr = "127.0.0.1:0"
				}
				if stubURL, err = serveStub(addr); err != nil {
					return err
				}
				fmt.Fprintf(stdout, "stub model at %s, %s a call\n", stubURL, latency)
			}
			secret := func() ([]byte, error) { return app.Secret(*cfg) }
			if up {
				c := *cfg
				dir, err := os.MkdirTemp("", "purser-bench-up-*")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				c.DataDir, c.HTTPAddr, c.NATSListen = dir, "127.0.0.1:0", "127.0.0.1:0"
				c.Model, c.OpenAIBaseURL, c.OpenAIKey = "offline", "", ""
				if stubURL != "" {
					c.Model, c.OpenAIBaseURL, c.OpenAIKey, c.ModelProtocol = "openai", stubURL, "stub", "tools"
				}
				ready := make(chan app.Info, 1)
				upCtx, stopUp := context.WithCancel(gctx)
				g.Go(func() error {
					<-stopServers
					stopUp()
					return nil
				})
				var level slog.Level
				if err := level.UnmarshalText([]byte(upLog)); err != nil {
					return fmt.Errorf("--up-log %q: want debug, info, warn or error", upLog)
				}
				log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
				g.Go(func() error { return app.Up(upCtx, c, log, func(i app.Info) { ready <- i }) })
				select {
				case i := <-ready:
					url = i.WebsocketURL()
					metricsURL = "http://" + i.MetricsAddr + "/metrics"
					secret = func() ([]byte, error) { return i.Secret, nil }
					store := "SQLite"
					if strings.HasPrefix(c.DatabaseURL, "postgres") {
						store = "Postgres"
					}
					fmt.Fprintf(stdout, "purser up in this process at %s (model %s, %s)\n", url, c.Model, store)
				case <-gctx.Done():
					close(stopServers)
					return g.Wait()
				}
			}
			tokenFor := func(int) string { return token }
			growthToken := tokenFor
			if token == "" {
				s, err := secret()
				if err != nil {
					close(stopServers)
					return errors.Join(err, g.Wait())
				}
				minter := auth.NewMinter(s, cfg.JWTIssuer, cfg.JWTAudience, time.Now)
				growthToken = func(i int) string {
					// A tenant each: what a read lists is what this
					// conversation added.
					t, _ := minter.Mint(fmt.Sprintf("%sg%d", tenant, i), fmt.Sprintf("g%d", i), []auth.Role{auth.RoleMember}, 2*time.Hour)
					return t
				}
				if tenants <= 0 {
					tenants = (users + 9) / 10
				}
				tokens := make([]string, users)
				for i := range tokens {
					t := fmt.Sprintf("%s%d", tenant, i%tenants)
					if tokens[i], err = minter.Mint(t, fmt.Sprintf("u%d", i), []auth.Role{auth.RoleMember}, 2*time.Hour); err != nil {
						close(stopServers)
						return errors.Join(err, g.Wait())
					}
				}
				tokenFor = func(i int) string { return tokens[i] }
			}
			label := fmt.Sprintf("b%d", time.Now().Unix()%100000)
			mem := &memPeak{}
			if up {
				mem.sample(0) // purser idle, before the users
			}
			show := progress(stdout)
			opts := bench.Options{URL: url, Token: tokenFor, Users: users, Duration: duration, Pause: pause, Ramp: ramp, Mix: kinds,
				Label: label, Tag: stubURL != "", Progress: func(p bench.Progress) {
					show(p)
					if up {
						mem.sample(p.InFlight)
					}
				}}
			fmt.Fprintf(stdout, "%d users in %d tenants, %s, pause %s, mix %s, %d CPUs\n", users, max(tenants, 1), duration, pause, mix, runtime.NumCPU())
			var storeFrom, storeTo bench.StoreSample
			if metricsURL != "" {
				storeFrom, _ = bench.SampleStore(gctx, metricsURL)
			}
			// On Postgres, the server's log before and after each run.
			var wal *bench.WAL
			keep := false // the server keeps its log for wal.Own
			if up && strings.HasPrefix(cfg.DatabaseURL, "postgres") {
				if wal, err = bench.OpenWAL(gctx, cfg.DatabaseURL); err != nil {
					fmt.Fprintf(stderr, "no WAL figures: %v\n", err)
				} else {
					defer wal.Close(context.WithoutCancel(ctx))
					if keep, err = wal.Keep(gctx); err != nil {
						fmt.Fprintf(stderr, "the database's own WAL: %v\n", err)
					}
				}
			}
			walAt := func() int64 {
				if wal == nil {
					return -1
				}
				n, err := wal.Position(gctx)
				if err != nil {
					fmt.Fprintf(stderr, "WAL position: %v\n", err)
					return -1
				}
				return n
			}
			walDiff := func(from, to int64) int64 {
				if from < 0 || to < 0 {
					return -1
				}
				return to - from
			}
			walFrom := walAt()
			res, err := bench.Run(gctx, opts)
			walTo := walAt()
			cost := bench.Cost{Purser: res, WAL: walDiff(walFrom, walTo), WALIdle: -1, WALOwn: -1}
			if cost.WAL >= 0 && keep {
				if own, err := wal.Own(gctx, walFrom, walTo); err != nil {
					fmt.Fprintf(stderr, "the database's own WAL: %v\n", err)
				} else {
					cost.WALOwn = own
				}
			}
			runCalls := calls.Calls()
			if metricsURL != "" && storeFrom.Series != nil {
				storeTo, _ = bench.SampleStore(gctx, metricsURL)
			}
			fmt.Fprintln(stdout)
			var growth *bench.GrowthReport
			if err == nil && stubURL != "" && growthUsers > 0 && growthMessages > 1 {
				const growthPause = 700 * time.Millisecond
				fmt.Fprintf(stdout, "prompt growth: %d users, %d messages each, pause %s, a tenant each\n", growthUsers, growthMessages, growthPause)
				gopts := opts
				gopts.Users, gopts.Messages, gopts.Duration, gopts.Pause, gopts.Ramp = growthUsers, growthMessages, time.Hour, growthPause, 0
				gopts.Token, gopts.Label, gopts.Progress = growthToken, label+"g", show
				gres, gerr := bench.Run(gctx, gopts)
				fmt.Fprintln(stdout)
				if gerr != nil {
					err = gerr
				} else {
					r := bench.NewGrowthReport(calls.Calls(), gopts.Label+"-", 2, growthMessages)
					growth = &r
					if gres.Errors > 0 {
						fmt.Fprintf(stdout, "prompt growth: %d errors: %v\n", gres.Errors, gres.ErrorText)
					}
				}
			}
			var raw bench.Result
			if err == nil && baseline {
				b, berr := bench.StartBaseline(latency)
				if berr != nil {
					err = berr
				} else {
					fmt.Fprintf(stdout, "baseline: websocket -> JetStream -> worker -> JetStream -> websocket, no state\n")
					bopts := opts
					bopts.URL, bopts.Token, bopts.Label = b.URL, func(int) string { return "" }, label+"raw"
					walFrom := walAt()
					raw, err = bench.Run(gctx, bopts)
					cost.Baseline, cost.WALIdle = raw, walDiff(walFrom, walAt())
					fmt.Fprintln(stdout)
					err = errors.Join(err, b.Close())
				}
			}
			close(stopServers)
			err = errors.Join(err, g.Wait())
			if errors.Is(err, context.Canceled) {
				err = nil
			}
			fmt.Fprintln(stdout)
			bench.Report(stdout, "purser", res)
			if up {
				mem.report(stdout)
			}
			if storeTo.Series != nil {
				bench.ReportStore(stdout, storeFrom, storeTo)
			}
			if baseline && raw.Turns > 0 {
				bench.Report(stdout, "baseline", raw)
				fmt.Fprintf(stdout, "ratio     purser/baseline: turns/s %.2f, e2e p50 %.2fx, p99 %.2fx\n",
					res.TurnsPerSecond()/raw.TurnsPerSecond(), ratio(bench.Quantile(res.E2E, .5), bench.Quantile(raw.E2E, .5)),
					ratio(bench.Quantile(res.E2E, .99), bench.Quantile(raw.E2E, .99)))
			}
			cost.Write(stdout)
			if stubURL != "" {
				bench.NewFirstTokenReport(res, runCalls).Write(stdout)
			}
			if growth != nil {
				growth.Write(stdout)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&url, "url", "ws://127.0.0.1:8080/v1/ws", "websocket URL of a running purser")
	f.StringVar(&token, "token", "", "one bearer token for every user (default: minted per user with the data folder's secret)")
	f.StringVar(&tenant, "tenant", "bench", "tenant name prefix of the minted tokens")
	f.IntVar(&tenants, "tenants", 0, "tenants the users are spread over (default: one for every 10 users, as households or small teams)")
	f.IntVar(&users, "users", 100, "websocket users")
	f.DurationVar(&duration, "duration", 30*time.Second, "how long users start turns")
	f.DurationVar(&pause, "pause", time.Second, "pause after each turn")
	f.DurationVar(&ramp, "ramp", 5*time.Second, "users connect spread over this")
	f.StringVar(&mix, "mix", "read,add,clarify", "turn kinds each user cycles through: read, add (with approve), clarify")
	f.DurationVar(&latency, "model-latency", 0, "with --up or --stub-model: the stub model's time per call (0 with --up: the offline model)")
	f.StringVar(&stubAddr, "stub-model", "", "serve the stub model on this address for a purser started elsewhere")
	f.BoolVar(&up, "up", false, "start purser in this process on a fresh data folder")
	f.BoolVar(&baseline, "baseline", true, "also run the bare JetStream baseline and print the ratio")
	f.StringVar(&debugAddr, "debug-addr", "", "serve /debug/pprof on this address while the bench runs")
	f.StringVar(&upLog, "up-log", "error", "with --up: what the purser started here logs (warn shows what went wrong without a line for every turn)")
	f.IntVar(&growthUsers, "growth-users", 6, "with the stub model: users who then send --growth-messages messages each, to measure prompt tokens as a conversation grows (0: none)")
	f.IntVar(&growthMessages, "growth-messages", 50, "with the stub model: messages each --growth-users user sends")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of this process (with --up, purser's too) to this file")
	return cmd
}

func parseMix(s string) ([]bench.Kind, error) {
	var out []bench.Kind
	for _, k := range strings.Split(s, ",") {
		switch k = strings.TrimSpace(k); bench.Kind(k) {
		case bench.KindRead, bench.KindAdd, bench.KindClarify:
			out = append(out, bench.Kind(k))
		case "":
		default:
			return nil, fmt.Errorf("--mix: unknown turn kind %q (read, add, clarify)", k)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--mix: no turn kinds")
	}
	return out, nil
}

func progress(w io.Writer) func(bench.Progress) {
	return func(p bench.Progress) {
		fmt.Fprintf(w, "\r%5.0fs  connected %5d  turns %7d  now %7.1f/s  in flight %5d  errors %d   ",
			p.Elapsed.Seconds(), p.Connected, p.Turns, p.TurnsPerSecondNow, p.InFlight, p.Errors)
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// memPeak follows this process's heap and goroutines while turns are in
// flight (with --up, purser and the bench's own users alike, so per turn
// it is an upper bound for purser).
type memPeak struct {
	idleHeap, peakHeap     uint64
	idleGorout, peakGorout int
	peakInFlight           int
}

func (m *memPeak) sample(inFlight int) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	g := runtime.NumGoroutine()
	if inFlight == 0 && m.idleHeap == 0 {
		m.idleHeap, m.idleGorout = ms.HeapInuse, g
		return
	}
	if inFlight > m.peakInFlight {
		m.peakInFlight, m.peakHeap, m.peakGorout = inFlight, ms.HeapInuse, g
	}
}

func (m *memPeak) report(w io.Writer) {
	if m.peakInFlight == 0 {
		return
	}
	perTurn := float64(m.peakHeap-min(m.peakHeap, m.idleHeap)) / float64(m.peakInFlight) / 1024
	fmt.Fprintf(w, "memory    heap %.0f MB idle, %.0f MB with %d turns in flight (%.1f KB a turn, users' sockets included); goroutines %d -> %d\n",
		float64(m.idleHeap)/(1<<20), float64(m.peakHeap)/(1<<20), m.peakInFlight, perTurn, m.idleGorout, m.peakGorout)
}
