// Command chaos is `make chaos`: purser's four services apart on a loopback
// NATS and a fresh PostgreSQL database, killed at random while many users
// make changes, then compared with what the users were told. Its last line
// is "chaos: N turns, K kills, L lost, D doubled, S stuck, slowest recovery T";
// it exits 1 unless L, D and S are all 0.
//
// With -mode cluster (`make chaos-cluster`) it runs a three-node NATS
// cluster, a PostgreSQL server of its own and two replicas of every
// service (see chaos.RunCluster); its last line is "chaos-cluster: N
// turns, K kills (A NATS nodes, B replicas), R rolled, L lost, D doubled,
// S stuck, F failed, slowest recovery T" and it exits 1 unless L, D, S
// and F are all 0. The NATS nodes are this program again, run with
// -nats-node.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/purser-ai/purser/internal/chaos"
)

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "-nats-node" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := chaos.RunNATSNode(ctx, os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "chaos:", err)
			os.Exit(2)
		}
		return
	}
	// Cluster mode has fewer turns by default, and its killing phase
	// (the first 30% of them) kills more often; fewer users at once spread
	// its turns over long enough for every replica to be rolled under load
	// (eight rolls of 1-4 s each while the last 70% of the turns run).
	defTurns, defEvery, defUsers := "1000", "1500ms", "40"
	if modeArg() == "cluster" {
		defTurns, defEvery, defUsers = "400", "500ms", "16"
	}
	turns, _ := strconv.Atoi(env("CHAOS_TURNS", defTurns))
	users, _ := strconv.Atoi(env("CHAOS_USERS", defUsers))
	every, _ := time.ParseDuration(env("CHAOS_EVERY", defEvery))
	limit, _ := time.ParseDuration(env("CHAOS_LIMIT", "15m"))
	cfg := chaos.Config{Turns: turns, Users: users, Every: every, Limit: limit, Out: os.Stdout, Seed: uint64(time.Now().UnixNano())}
	flag.StringVar(&cfg.Binary, "bin", "bin/purser", "the purser binary to run")
	flag.StringVar(&cfg.Mode, "mode", env("CHAOS_MODE", "services"), "services (SIGKILL services), nats (restart the NATS server) or cluster (a NATS cluster, PostgreSQL and two replicas of each service)")
	flag.StringVar(&cfg.BaseDSN, "db", env("PURSER_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL URL that may create databases")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the work folder (service logs, NATS data)")
	flag.Parse()
	if turns < 1 || users < 1 || every <= 0 || limit <= 0 || (cfg.Mode != "services" && cfg.Mode != "nats" && cfg.Mode != "cluster") {
		fmt.Fprintln(os.Stderr, "chaos: CHAOS_TURNS and CHAOS_USERS must be positive, CHAOS_EVERY and CHAOS_LIMIT durations, -mode services, nats or cluster")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if cfg.Mode == "cluster" {
		os.Exit(cluster(ctx, cfg))
	}
	rep, err := chaos.Run(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(2)
	}
	for _, d := range rep.Details {
		fmt.Println("  ", d)
	}
	if rep.Errored > 0 {
		fmt.Printf("chaos: %d turns ended in an error the user saw (their outcome may be either state)\n", rep.Errored)
	}
	fmt.Println(rep.Line())
	if !rep.OK() {
		os.Exit(1)
	}
}

// modeArg is the -mode flag's value before the flags are parsed (it
// decides CHAOS_TURNS's default), or CHAOS_MODE.
func modeArg() string {
	for i, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(strings.TrimLeft(a, "-"), "mode="); ok {
			return v
		}
		if strings.TrimLeft(a, "-") == "mode" && i+2 < len(os.Args) {
			return os.Args[i+2]
		}
	}
	return os.Getenv("CHAOS_MODE")
}

// cluster runs -mode cluster and returns the exit code.
func cluster(ctx context.Context, cfg chaos.Config) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 2
	}
	cfg.Self = self
	rep, err := chaos.RunCluster(ctx, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos-cluster:", err)
		return 2
	}
	for _, d := range rep.Details {
		fmt.Println("  ", d)
	}
	fmt.Println(rep.ClusterLine())
	if !rep.ClusterOK() {
		return 1
	}
	return 0
}
