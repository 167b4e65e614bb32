// Command chaos is `make chaos`: purser's four services apart on a loopback
// NATS and a fresh PostgreSQL database, killed at random while many users
// make changes, then compared with what the users were told. Its last line
// is "chaos: N turns, K kills, L lost, D doubled, S stuck, slowest recovery T";
// it exits 1 unless L, D and S are all 0.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
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
	turns, _ := strconv.Atoi(env("CHAOS_TURNS", "1000"))
	users, _ := strconv.Atoi(env("CHAOS_USERS", "40"))
	every, _ := time.ParseDuration(env("CHAOS_EVERY", "1500ms"))
	limit, _ := time.ParseDuration(env("CHAOS_LIMIT", "15m"))
	cfg := chaos.Config{Turns: turns, Users: users, Every: every, Limit: limit, Out: os.Stdout, Seed: uint64(time.Now().UnixNano())}
	flag.StringVar(&cfg.Binary, "bin", "bin/purser", "the purser binary to run")
	flag.StringVar(&cfg.Mode, "mode", env("CHAOS_MODE", "services"), "services (SIGKILL services) or nats (restart the NATS server)")
	flag.StringVar(&cfg.BaseDSN, "db", env("PURSER_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"), "PostgreSQL URL that may create databases")
	flag.BoolVar(&cfg.Keep, "keep", false, "keep the work folder (service logs, NATS data)")
	flag.Parse()
	if turns < 1 || users < 1 || every <= 0 || limit <= 0 || (cfg.Mode != "services" && cfg.Mode != "nats") {
		fmt.Fprintln(os.Stderr, "chaos: CHAOS_TURNS and CHAOS_USERS must be positive, CHAOS_EVERY and CHAOS_LIMIT durations, -mode services or nats")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
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
