package chaos

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// clusterReplicas is how many processes of each service cluster mode runs.
const clusterReplicas = 2

// RunCluster is `make chaos-cluster`: a three-node NATS cluster with
// every stream at three replicas, a PostgreSQL server of the harness's
// own, and two replicas of every service, each a process. Users spread
// over both ingresses (a user whose ingress dies goes on at the other).
// While the first 30% of the turns are handed out it SIGKILLs NATS nodes
// (one at a time, each back and current before the next, so that no
// stream loses its quorum) and service replicas at random, and once,
// 15% of the way in, the PostgreSQL server; then it rolls every replica
// in turn (SIGTERM, wait for the exit, start again) while the other turns
// go on. At the
// end it compares each user's transcript with the database, as Run does.
func RunCluster(ctx context.Context, cfg Config) (Report, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Limit)
	defer cancel()
	dir, err := os.MkdirTemp("", "purser-chaos-cluster-")
	if err != nil {
		return Report{}, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	fmt.Fprintf(cfg.Out, "chaos-cluster: work folder %s; starting 3 NATS nodes, PostgreSQL and %d replicas of each service\n", dir, clusterReplicas)
	c, err := startFleet(ctx, cfg.Binary, cfg.Self, dir, clusterReplicas)
	if err != nil {
		return Report{}, err
	}
	defer c.stop()
	if cfg.Keep {
		// The server is stopped at the end but its folder kept.
		fmt.Fprintf(cfg.Out, "chaos-cluster: PostgreSQL's data (database %s) is kept in %s\n", c.keepDatabase(), c.pg.DataDir())
	}

	users, closeUsers, err := connectUsers(ctx, c.secret, cfg.Users, cfg.Seed, c.ingresses(clusterReplicas))
	defer closeUsers()
	if err != nil {
		return Report{}, err
	}
	if err := seedLines(ctx, c.dsn, users); err != nil {
		return Report{}, err
	}

	var next, finished atomic.Int64
	driveCtx, stopDriving := context.WithCancel(ctx)
	defer stopDriving()
	// A person reads the answer before the next change: the pause spreads
	// the turns over long enough for every replica to be rolled while they
	// go on.
	wg := drivers(driveCtx, users, cfg.Turns, readingPause, &next, &finished)

	var (
		events []killEvent
		rep    Report
		evMu   sync.Mutex
	)
	note := func(ev killEvent, format string, args ...any) {
		evMu.Lock()
		events = append(events, ev)
		evMu.Unlock()
		fmt.Fprintf(cfg.Out, "chaos-cluster: %s at turn %d/%d: %s\n", ev.what, finished.Load(), cfg.Turns, fmt.Sprintf(format, args...))
	}
	killCtx, stopKilling := context.WithCancel(ctx)
	killDone := make(chan struct{})
	var killErr error
	go func() {
		defer close(killDone)
		killErr = chaosPhase(killCtx, ctx, c, cfg, &rep, &next, &finished, note)
	}()

	awaitTurns(ctx, wg, stopDriving, func(elapsed time.Duration) {
		fmt.Fprintf(cfg.Out, "chaos-cluster: %d/%d turns done, %s\n", finished.Load(), cfg.Turns, elapsed)
	})
	stopKilling()
	<-killDone
	if killErr != nil {
		return rep, killErr
	}

	fmt.Fprintf(cfg.Out, "chaos-cluster: %s\n", c.usageLine(cfg.Turns))
	got, err := compare(ctx, c.dsn, users)
	if err != nil {
		return rep, err
	}
	got.NATSKills, got.ReplicaKills, got.Rolled, got.PGRestarts, got.RolledIdle = rep.NATSKills, rep.ReplicaKills, rep.Rolled, rep.PGRestarts, rep.RolledIdle
	if got.RolledIdle > 0 {
		got.Details = append(got.Details, fmt.Sprintf("%d of the %d replicas were rolled after the last turn, with no load (raise CHAOS_TURNS)", got.RolledIdle, got.Rolled))
	}
	got.Kills = got.NATSKills + got.ReplicaKills
	got.Details = append(got.Details, c.startDetails()...)
	got.SlowestRecovery = slowestRecovery(events, users)
	if ctx.Err() != nil {
		got.Details = append(got.Details, fmt.Sprintf("the run hit its time bound (%s) before every turn was done", cfg.Limit))
		got.Stuck += cfg.Turns - got.Turns
	}
	return got, nil
}

// chaosPhase kills at random until 30% of the turns are handed out (or
// killCtx ends), restarting PostgreSQL once 15% of the way in, and
// then rolls every replica, which only ctx interrupts. It counts into
// rep and tells note of each event.
func chaosPhase(killCtx, ctx context.Context, c *cluster, cfg Config, rep *Report, next, finished *atomic.Int64,
	note func(killEvent, string, ...any)) error {
	rng := rand.New(rand.NewPCG(cfg.Seed, 99))
	names := replicaNames(clusterReplicas)
	rollAt, pgAt := int64(cfg.Turns*3/10), int64(cfg.Turns*3/20)
	pgDone := false
	restartPG := func() error {
		ev := killEvent{what: "postgres", at: time.Now()}
		c.pg.Kill()
		time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
		if err := c.pg.Restart(ctx); err != nil {
			return fmt.Errorf("restart PostgreSQL: %w", err)
		}
		ev.back = time.Now()
		pgDone = true
		rep.PGRestarts++
		note(ev, "SIGKILLed the postmaster, up again after %s", ev.back.Sub(ev.at).Round(time.Millisecond))
		return nil
	}
	var restarts sync.WaitGroup
	down := map[string]bool{}                   // services with a replica down
	backUp := make(chan string, len(names))     // services whose killed replica is back
	restartErrs := make(chan error, len(names)) // restarts that failed
	// After a NATS node is back, the next kill waits until a turn has
	// finished (for at most 30 s): each blow lands on a cluster that has
	// shown it serves again, rather than on one still electing leaders
	// after the last.
	servedAfter := int64(-1)
kill:
	for next.Load() < rollAt {
		for since := time.Now(); finished.Load() <= servedAfter && time.Since(since) < 30*time.Second && killCtx.Err() == nil; {
			time.Sleep(100 * time.Millisecond)
		}
	drain:
		for {
			select {
			case s := <-backUp:
				down[s] = false
			case err := <-restartErrs:
				restarts.Wait()
				return err
			default:
				break drain
			}
		}
		wait := time.Duration(float64(cfg.Every) * (0.25 + 1.5*rng.Float64()))
		select {
		case <-killCtx.Done():
			break kill
		case <-time.After(wait):
		}
		if !pgDone && finished.Load() >= pgAt {
			if err := restartPG(); err != nil {
				return err
			}
			continue
		}
		ev := killEvent{at: time.Now()}
		if rng.IntN(3) == 0 {
			i := rng.IntN(len(c.natsNodes.nodes))
			ev.what = "NATS node " + c.natsNodes.nodes[i].Name
			c.natsNodes.kill(i)
			time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
			// A node that fails to come back is started again, as its
			// supervisor would; the failure is said.
			for try := 1; ; try++ {
				err := c.natsNodes.start(ctx, i)
				if err == nil {
					break
				}
				if try == 3 || ctx.Err() != nil {
					return err
				}
				fmt.Fprintf(cfg.Out, "chaos-cluster: %v; starting it again\n", err)
				time.Sleep(time.Second)
			}
			ev.back = time.Now()
			// Current again before anything else is killed: a stream
			// never has two of its three replicas down.
			if err := c.natsNodes.healthy(ctx, i, 2*time.Minute); err != nil {
				return err
			}
			rep.NATSKills++
			servedAfter = finished.Load()
			note(ev, "SIGKILLed, started after %s, current after %s", ev.back.Sub(ev.at).Round(time.Millisecond), time.Since(ev.at).Round(time.Millisecond))
			continue
		}
		// A replica of a service none of whose replicas is down: it comes
		// back in the background, as the next kills go on, so that a slow
		// start (a toolrunner's) does not end the killing early.
		var up []string
		for _, n := range names {
			if !down[serviceOf(n)] {
				up = append(up, n)
			}
		}
		if len(up) == 0 {
			continue
		}
		ev.what = up[rng.IntN(len(up))]
		down[serviceOf(ev.what)] = true
		c.kill(ev.what)
		rep.ReplicaKills++
		restarts.Add(1)
		go func(ev killEvent, pause time.Duration) {
			defer restarts.Done()
			time.Sleep(pause)
			if err := c.start(ctx, ev.what); err != nil {
				restartErrs <- fmt.Errorf("restart %s: %w", ev.what, err)
				return
			}
			ev.back = time.Now()
			note(ev, "SIGKILLed, ready again after %s", ev.back.Sub(ev.at).Round(time.Millisecond))
			backUp <- serviceOf(ev.what)
		}(ev, time.Duration(rng.IntN(1000))*time.Millisecond)
	}
	restarts.Wait()
	close(backUp)
	select {
	case err := <-restartErrs:
		return err
	default:
	}
	if !pgDone {
		if err := restartPG(); err != nil {
			return err
		}
	}
	for _, name := range rollOrder(names) {
		ev := killEvent{what: "roll " + name, at: time.Now()}
		// A replica that outlives its grace is killed, and the roll
		// says so; the harness bounds the wait at three times purser's
		// own shutdown grace.
		termErr := c.term(name, time.Minute)
		exited := time.Now()
		if err := c.start(ctx, name); err != nil {
			return fmt.Errorf("roll %s: %w", name, err)
		}
		ev.back = time.Now()
		rep.Rolled++
		if finished.Load() >= int64(cfg.Turns) {
			rep.RolledIdle++
		}
		if termErr != nil {
			note(ev, "%v", termErr)
			continue
		}
		note(ev, "exited %s after SIGTERM, ready again after %s", exited.Sub(ev.at).Round(time.Millisecond), ev.back.Sub(ev.at).Round(time.Millisecond))
	}
	return nil
}

// readingPause is how long each user of a cluster run waits between
// changes.
const readingPause = time.Second

// rollOrder is the order replicas are rolled in: the ones a person's turn
// crosses first (the ingress, whose sockets close with 1012, and the
// orchestrator, whose lanes move) while the load is surely still on, and
// the toolrunner, slowest to be ready again, last.
func rollOrder(names []string) []string {
	rank := map[string]int{"ingress": 0, "orchestrator": 1, "notifier": 2, "toolrunner": 3}
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int { return rank[serviceOf(a)] - rank[serviceOf(b)] })
	return out
}
