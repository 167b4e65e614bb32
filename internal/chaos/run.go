package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Config says what a chaos run does.
type Config struct {
	Binary  string        // the purser binary
	BaseDSN string        // a PostgreSQL URL whose user may create databases
	Turns   int           // changes to make, across all users
	Users   int           // users at once
	Mode    string        // "services": kill services; "nats": restart the NATS server; "cluster": see RunCluster
	Every   time.Duration // mean time between kills
	Limit   time.Duration // the whole run's bound
	Seed    uint64
	Out     io.Writer
	Keep    bool // keep the work folder (logs, NATS data) for a look
	// Self is this program, run again as a NATS node in cluster mode.
	Self string
}

// Report is a run's outcome.
type Report struct {
	Turns, Kills, Lost, Doubled, Stuck int
	Errored                            int
	SlowestRecovery                    time.Duration
	Details                            []string
	// Cluster mode: the kills split into NATS nodes and service
	// replicas, the replicas rolled, and the PostgreSQL restarts.
	NATSKills, ReplicaKills, Rolled, PGRestarts int
	// RolledIdle counts the replicas rolled after the last turn ended,
	// with no load: the turns were too few for the roll.
	RolledIdle int
}

// Line is the last line a run prints.
func (r Report) Line() string {
	return fmt.Sprintf("chaos: %d turns, %d kills, %d lost, %d doubled, %d stuck, slowest recovery %s",
		r.Turns, r.Kills, r.Lost, r.Doubled, r.Stuck, r.SlowestRecovery.Round(time.Millisecond))
}

// ClusterLine is the last line a cluster run prints; failed is the turns
// that ended in an error the user saw.
func (r Report) ClusterLine() string {
	return fmt.Sprintf("chaos-cluster: %d turns, %d kills (%d NATS nodes, %d replicas), %d rolled, %d lost, %d doubled, %d stuck, %d failed, slowest recovery %s",
		r.Turns, r.NATSKills+r.ReplicaKills, r.NATSKills, r.ReplicaKills, r.Rolled, r.Lost, r.Doubled, r.Stuck, r.Errored,
		r.SlowestRecovery.Round(time.Millisecond))
}

// ClusterOK reports whether nothing was lost, doubled, stuck or failed.
func (r Report) ClusterOK() bool { return r.OK() && r.Errored == 0 }

// OK reports whether nothing was lost, doubled or stuck.
func (r Report) OK() bool { return r.Lost == 0 && r.Doubled == 0 && r.Stuck == 0 }

// Run starts the cluster, drives the turns while killing, and compares.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Limit)
	defer cancel()
	dir, err := os.MkdirTemp("", "purser-chaos-")
	if err != nil {
		return Report{}, err
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	fmt.Fprintf(cfg.Out, "chaos: work folder %s; starting NATS, PostgreSQL database and the four services\n", dir)
	c, err := startCluster(ctx, cfg.Binary, cfg.BaseDSN, dir)
	if err != nil {
		return Report{}, err
	}
	if cfg.Keep {
		fmt.Fprintf(cfg.Out, "chaos: the database %s is kept too\n", c.keepDatabase())
	}
	defer c.stop()

	users, closeUsers, err := connectUsers(ctx, c.secret, cfg.Users, cfg.Seed, []string{c.ingress})
	defer closeUsers()
	if err != nil {
		return Report{}, err
	}
	if err := seedLines(ctx, c.dsn, users); err != nil {
		return Report{}, err
	}

	// Turns are handed out one at a time, so that N is exact however the
	// users' speeds differ.
	var next atomic.Int64
	var finished atomic.Int64
	driveCtx, stopDriving := context.WithCancel(ctx)
	defer stopDriving()
	wg := drivers(driveCtx, users, cfg.Turns, 0, &next, &finished)

	// The killer runs until every turn is handed out and done.
	var kills []killEvent
	var killMu sync.Mutex
	killCtx, stopKilling := context.WithCancel(ctx)
	killDone := make(chan struct{})
	go func() {
		defer close(killDone)
		rng := rand.New(rand.NewPCG(cfg.Seed, 99))
		victims := []string{"orchestrator", "toolrunner", "notifier"}
		for {
			wait := time.Duration(float64(cfg.Every) * (0.25 + 1.5*rng.Float64()))
			select {
			case <-killCtx.Done():
				return
			case <-time.After(wait):
			}
			ev := killEvent{at: time.Now()}
			if cfg.Mode == "nats" {
				ev.what = "nats"
				if err := c.restartNATS(time.Duration(rng.IntN(1500)) * time.Millisecond); err != nil {
					fmt.Fprintf(cfg.Out, "chaos: restart NATS: %v\n", err)
					return
				}
			} else {
				ev.what = victims[rng.IntN(len(victims))]
				c.kill(ev.what)
				time.Sleep(time.Duration(rng.IntN(1000)) * time.Millisecond)
				if err := c.start(ctx, ev.what); err != nil {
					fmt.Fprintf(cfg.Out, "chaos: restart %s: %v\n", ev.what, err)
					return
				}
			}
			ev.back = time.Now()
			killMu.Lock()
			kills = append(kills, ev)
			killMu.Unlock()
		}
	}()

	awaitTurns(ctx, wg, stopDriving, func(elapsed time.Duration) {
		killMu.Lock()
		n := len(kills)
		killMu.Unlock()
		fmt.Fprintf(cfg.Out, "chaos: %d/%d turns done, %d kills, %s\n", finished.Load(), cfg.Turns, n, elapsed)
	})
	stopKilling()
	<-killDone

	rep, err := compare(ctx, c.dsn, users)
	if err != nil {
		return rep, err
	}
	rep.Kills = len(kills)
	rep.SlowestRecovery = slowestRecovery(kills, users)
	rep.Details = append(rep.Details, c.startDetails()...)
	if ctx.Err() != nil {
		rep.Details = append(rep.Details, fmt.Sprintf("the run hit its time bound (%s) before every turn was done", cfg.Limit))
		rep.Stuck += cfg.Turns - rep.Turns
	}
	return rep, nil
}

type killEvent struct {
	what     string
	at, back time.Time
}

// slowestRecovery is the longest wait, after a kill, for the next turn to
// finish anywhere.
func slowestRecovery(kills []killEvent, users []*user) time.Duration {
	var done []time.Time
	for _, u := range users {
		u.mu.Lock()
		done = append(done, u.done...)
		u.mu.Unlock()
	}
	slices.SortFunc(done, func(a, b time.Time) int { return a.Compare(b) })
	var worst time.Duration
	for _, k := range kills {
		i := sort.Search(len(done), func(i int) bool { return done[i].After(k.at) })
		if i < len(done) {
			worst = max(worst, done[i].Sub(k.at))
		}
	}
	return worst
}

// compare checks each user's expenses in the database against what the
// user was told.
func compare(ctx context.Context, dsn string, users []*user) (Report, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return Report{}, err
	}
	defer db.Close()
	var rep Report
	for _, u := range users {
		u.mu.Lock()
		rep.Turns += u.turns
		rep.Stuck += len(u.stuck)
		rep.Errored += len(u.errored)
		rep.Details = append(rep.Details, u.stuck...)
		rep.Details = append(rep.Details, u.errored...)
		for turn, seqs := range u.answers {
			if len(seqs) > 1 {
				rep.Doubled++
				rep.Details = append(rep.Details, fmt.Sprintf("%s: turn %s ended %d times (seqs %v)", u.id, turn, len(seqs), seqs))
			}
		}
		lines := map[int64]expense{}
		for id, l := range u.lines {
			lines[id] = *l
		}
		rules, rulesMaybe := maps.Clone(u.rules), maps.Clone(u.rulesMaybe)
		cats, catsMaybe := maps.Clone(u.cats), maps.Clone(u.catsMaybe)
		want := map[int64]*expense{}
		var uncertainAdds []*expense
		for id, e := range u.expenses {
			if id < 0 {
				uncertainAdds = append(uncertainAdds, e)
				continue
			}
			want[id] = e
		}
		u.mu.Unlock()

		rows, err := db.QueryContext(ctx, `SELECT id, item, amount_minor, category FROM expenses WHERE tenant_id = 'chaos' AND user_id = $1`, u.id)
		if err != nil {
			return rep, err
		}
		got := map[int64]expense{}
		for rows.Next() {
			var id int64
			var e expense
			if err := rows.Scan(&id, &e.item, &e.minor, &e.category); err != nil {
				rows.Close()
				return rep, err
			}
			got[id] = e
		}
		rows.Close()
		for id, w := range want {
			g, ok := got[id]
			switch {
			case w.uncertain && w.before == -1 && !ok: // an uncertain delete that happened
			case !ok:
				rep.Lost++
				rep.Details = append(rep.Details, fmt.Sprintf("%s: expense #%d (%s, %d) is missing", u.id, id, w.item, w.minor))
			case g.minor != w.minor && !(w.uncertain && g.minor == w.before):
				rep.Lost++
				rep.Details = append(rep.Details, fmt.Sprintf("%s: expense #%d is %d, the user was told %d", u.id, id, g.minor, w.minor))
			case w.category != "" && g.category != w.category && !(w.catEither != "" && g.category == w.catEither):
				rep.Lost++
				rep.Details = append(rep.Details, fmt.Sprintf("%s: expense #%d is filed under %q, the user was told %q", u.id, id, g.category, w.category))
			}
			delete(got, id)
		}
		for id, g := range got {
			matched := false
			for i, a := range uncertainAdds {
				// By amount too: the model may read the made-up item's
				// letters as a word ("of", "to") and leave it out.
				if a != nil && (a.item == g.item || a.minor == g.minor) {
					uncertainAdds[i], matched = nil, true
					break
				}
			}
			if !matched {
				rep.Doubled++
				rep.Details = append(rep.Details, fmt.Sprintf("%s: expense #%d (%s, %d) was never reported to the user", u.id, id, g.item, g.minor))
			}
		}
		if err := compareNames(ctx, db, u.id, &rep, rules, rulesMaybe, cats, catsMaybe); err != nil {
			return rep, err
		}
		if err := compareLines(ctx, db, u.id, &rep, lines); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// compareNames checks a user's rules and own categories in the database
// against what the user was told: each one reported is there (a rule with
// its category), and nothing is there that was never asked for.
func compareNames(ctx context.Context, db *sql.DB, user string, rep *Report, rules map[string]string, rulesMaybe map[string]bool,
	cats, catsMaybe map[string]bool) error {
	got := map[string]string{}
	rows, err := db.QueryContext(ctx, `SELECT LOWER(pattern), category FROM category_rules WHERE tenant_id = 'chaos' AND user_id = $1`, user)
	if err != nil {
		return err
	}
	for rows.Next() {
		var p, c string
		if err := rows.Scan(&p, &c); err != nil {
			rows.Close()
			return err
		}
		got[p] = c
	}
	rows.Close()
	for p, c := range rules {
		switch g, ok := got[p]; {
		case !ok:
			rep.Lost++
			rep.Details = append(rep.Details, fmt.Sprintf("%s: the rule %q is missing", user, p))
		case g != c:
			rep.Lost++
			rep.Details = append(rep.Details, fmt.Sprintf("%s: the rule %q files under %q, the user was told %q", user, p, g, c))
		}
		delete(got, p)
	}
	for p := range got {
		if !rulesMaybe[p] {
			rep.Doubled++
			rep.Details = append(rep.Details, fmt.Sprintf("%s: the rule %q was never reported to the user", user, p))
		}
	}
	have := map[string]bool{}
	rows, err = db.QueryContext(ctx, `SELECT name FROM categories WHERE tenant_id = 'chaos' AND user_id = $1`, user)
	if err != nil {
		return err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		have[n] = true
	}
	rows.Close()
	for n := range cats {
		if !have[n] {
			rep.Lost++
			rep.Details = append(rep.Details, fmt.Sprintf("%s: the category %q is missing", user, n))
		}
		delete(have, n)
	}
	for n := range have {
		if !catsMaybe[n] {
			rep.Doubled++
			rep.Details = append(rep.Details, fmt.Sprintf("%s: the category %q was never reported to the user", user, n))
		}
	}
	return rows.Err()
}

// seedLines gives each user three imported transactions, as a statement
// import would have stored them, for the turns that fix a line's category.
func seedLines(ctx context.Context, dsn string, users []*user) error {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, u := range users {
		for i, desc := range []string{"CARD PAYMENT ACME", "DIRECT DEBIT GYM", "SO RENT"} {
			var id int64
			err := db.QueryRowContext(ctx, `INSERT INTO transactions (tenant_id, user_id, document_id, date, amount_minor, currency, description, vendor,
				category, fitid, dedupe_key, review_status, created_at) VALUES ('chaos', $1, 'doc-seed', '2026-10-01', $2, 'GBP', $3, '', 'other', '', $4,
				'needs_review', now()) RETURNING id`, u.id, -int64(1000*(i+1)), desc, fmt.Sprintf("seed-%d", i)).Scan(&id)
			if err != nil {
				return fmt.Errorf("seed imported lines: %w", err)
			}
			u.lines[id] = &expense{item: desc, minor: -int64(1000 * (i + 1)), category: "other"}
		}
	}
	return nil
}

// compareLines checks the category of each of a user's imported lines
// against what they were told.
func compareLines(ctx context.Context, db *sql.DB, user string, rep *Report, lines map[int64]expense) error {
	rows, err := db.QueryContext(ctx, `SELECT id, category FROM transactions WHERE tenant_id = 'chaos' AND user_id = $1`, user)
	if err != nil {
		return err
	}
	defer rows.Close()
	got := map[int64]string{}
	for rows.Next() {
		var id int64
		var c string
		if err := rows.Scan(&id, &c); err != nil {
			return err
		}
		got[id] = c
	}
	for id, w := range lines {
		g, ok := got[id]
		switch {
		case !ok:
			rep.Lost++
			rep.Details = append(rep.Details, fmt.Sprintf("%s: transaction #%d is missing", user, id))
		case g != w.category && !(w.catEither != "" && g == w.catEither):
			rep.Lost++
			rep.Details = append(rep.Details, fmt.Sprintf("%s: transaction #%d is filed under %q, the user was told %q", user, id, g, w.category))
		}
	}
	return rows.Err()
}
