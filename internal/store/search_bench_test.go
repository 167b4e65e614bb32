package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// benchMerchants are the merchants of the search benchmark's ledger.
var benchMerchants = []string{"TESCO STORES", "SAINSBURYS S/MKTS", "AMZN Mktp UK", "HMRC SELF ASSESSMENT", "COUNCIL TAX", "COSTA COFFEE",
	"PRET A MANGER", "TFL TRAVEL", "SHELL PETROL", "BRITISH GAS", "NETFLIX.COM", "DELIVEROO", "WAITROSE", "UBER TRIP", "Café Rouge", "ACME LTD SALARY"}

// seedSearchBench gives user u1 of tenant t a ledger of n imported lines
// (and u2 a tenth as many), and returns how long the indexer took to
// index them all.
func seedSearchBench(b *testing.B, s *store.Store, n int) time.Duration {
	b.Helper()
	ctx := context.Background()
	const batch = 2000
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for lo := 0; lo < n+n/10; lo += batch {
		var txs []store.Transaction
		for i := lo; i < lo+batch && i < n+n/10; i++ {
			user := "u1"
			if i >= n {
				user = "u2"
			}
			m := benchMerchants[(i*7)%len(benchMerchants)]
			desc := fmt.Sprintf("%s %d", m, i%997)
			if i%3 == 0 {
				desc += " CARD PAYMENT"
			}
			txs = append(txs, store.Transaction{TenantID: "t", UserID: user, DocumentID: "d", Date: start.AddDate(0, 0, i%900).Format(time.DateOnly),
				AmountMinor: -int64(100 + i%5000), Currency: "GBP", Description: desc, Vendor: m, Category: "other",
				DedupeKey: fmt.Sprintf("k%d", i), ReviewStatus: store.ReviewOK})
		}
		if _, err := s.InsertTransactions(ctx, txs); err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	t0 := time.Now()
	for {
		k, err := s.IndexSearch(ctx, 2000)
		if err != nil {
			b.Fatalf("index: %v", err)
		}
		if k == 0 {
			break
		}
	}
	// As the indexer does when a burst ends.
	if err := s.OptimizeSearch(ctx); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// BenchmarkSearchLexical times a lexical search of one user's ledger of
// 100,000 entries (another user holds 10,000 more), offline: no
// embeddings server. The queries rotate over a merchant's name, an
// abbreviation found through its alias, a tax office, accented text, a
// word in a third of all lines ("card": the worst case here), two words
// that find nothing together (so the search asks again for either) and
// words that find nothing. Besides the mean it reports p50-ms and p95-ms (issue 35's
// target: at most 50 ms on each engine) and index-entries/s, how fast the
// indexer took the 110,000 lines the triggers queued (target: at least
// 1,000/s).
//
//	go test -run '^$' -bench BenchmarkSearchLexical -benchtime 400x ./internal/store/
func BenchmarkSearchLexical(b *testing.B) {
	queries := []string{"tesco", "amazon", "tax office", "cafe", "card", "netflix deliveroo", "find my payments to costa", "zzqx nothing"}
	for _, e := range storetest.Engines() {
		b.Run(e.Name, func(b *testing.B) {
			ctx := context.Background()
			dsn := e.DSN(b)
			s := storetest.Open(b, dsn)
			const n = 100_000
			took := seedSearchBench(b, s, n)
			if e.Name == "postgres" {
				analyze(b, dsn)
			}
			var lat []time.Duration
			for i := 0; b.Loop(); i++ {
				q := queries[i%len(queries)]
				t0 := time.Now()
				hits, err := s.SearchLexical(ctx, store.SearchFilter{TenantID: "t", UserID: "u1", Query: q, Limit: 20})
				lat = append(lat, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if q == "tesco" && len(hits) != 20 {
					b.Fatalf("search %q found %d", q, len(hits))
				}
			}
			reportP95(b, lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms") // lat sorted by reportP95
			b.ReportMetric(float64(n+n/10)/took.Seconds(), "index-entries/s")
		})
	}
}
