package store_test

import (
	"context"
	"database/sql"
	"slices"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store/storetest"
)

// BenchmarkLedgerSummary times a one-month LedgerSummary of one user on a
// ledger of 100,000 entries: half expenses typed by hand, half imported
// transactions (one in ten money in), in three currencies and eight
// categories over two years, shared by four users of one tenant. Each op
// sums a different month of the same user. Besides the mean it reports
// p95-ms, the 95th percentile of the ops' durations (issue 33's target:
// at most 50 ms on each engine). Postgres is given its statistics after the
// load, as autovacuum gives a live database: a table never analysed is
// planned blind (through the primary key, reading all the user's rows,
// about 30 ms a summary).
//
//	go test -run '^$' -bench BenchmarkLedgerSummary -benchtime 400x ./internal/store/
func BenchmarkLedgerSummary(b *testing.B) {
	for _, e := range storetest.Engines() {
		b.Run(e.Name, func(b *testing.B) {
			ctx := context.Background()
			dsn := e.DSN(b)
			s := storetest.Open(b, dsn)
			start := seedBenchLedger(b, s)
			if e.Name == "postgres" {
				analyze(b, dsn)
			}
			var took []time.Duration
			for i := 0; b.Loop(); i++ {
				m := start.AddDate(0, i%24, 0)
				from, to := m.Format(time.DateOnly), m.AddDate(0, 1, -1).Format(time.DateOnly)
				t0 := time.Now()
				sum, err := s.LedgerSummary(ctx, "t", "u1", from, to)
				took = append(took, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if sum.Count == 0 {
					b.Fatalf("summary of %s..%s counted nothing", from, to)
				}
			}
			reportP95(b, took)
		})
	}
}

// reportP95 reports the 95th percentile of took, the ops' durations, as
// p95-ms beside the benchmark's mean.
func reportP95(b *testing.B, took []time.Duration) {
	slices.Sort(took)
	b.ReportMetric(float64(took[(len(took)*95+99)/100-1].Microseconds())/1000, "p95-ms")
}

// analyze gathers Postgres's planner statistics of the database at dsn.
func analyze(b *testing.B, dsn string) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(context.Background(), "ANALYZE"); err != nil {
		b.Fatalf("analyze: %v", err)
	}
}
