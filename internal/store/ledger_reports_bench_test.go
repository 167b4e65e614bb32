package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// BenchmarkLedgerReports times the summaries of one user on a ledger of
// 100,000 entries (the ledger of BenchmarkLedgerSummary: half expenses
// typed by hand, half imported transactions from 500 shops, one in ten
// money in, three currencies, eight categories, two years, four users of
// one tenant): a month by category, a month by merchant, twelve months
// month over month, a month's ten biggest, and a year's recurring
// payments. Each op asks of a different month. Besides the mean it
// reports p95-ms, the 95th percentile of the ops' durations.
//
//	go test -run '^$' -bench BenchmarkLedgerReports -benchtime 100x ./internal/store/
func BenchmarkLedgerReports(b *testing.B) {
	for _, e := range storetest.Engines() {
		b.Run(e.Name, func(b *testing.B) {
			ctx := context.Background()
			dsn := e.DSN(b)
			s := storetest.Open(b, dsn)
			start := seedBenchLedger(b, s)
			if e.Name == "postgres" {
				analyze(b, dsn)
			}
			month := func(i int) (string, string) {
				m := start.AddDate(0, i%24, 0)
				return m.Format(time.DateOnly), m.AddDate(0, 1, -1).Format(time.DateOnly)
			}
			reports := []struct {
				name string
				run  func(i int) (int, error)
			}{
				{"by-category", func(i int) (int, error) {
					from, to := month(i)
					r, err := s.SpendingBreakdown(ctx, "t", "u1", from, to, store.ByCategory, 10)
					return len(r.Currencies), err
				}},
				{"by-merchant", func(i int) (int, error) {
					from, to := month(i)
					r, err := s.SpendingBreakdown(ctx, "t", "u1", from, to, store.ByMerchant, 10)
					return len(r.Currencies), err
				}},
				{"by-month-12", func(i int) (int, error) {
					from, _ := month(i % 12)
					_, to := month(i%12 + 11)
					r, err := s.SpendingByMonth(ctx, "t", "u1", from, to)
					return len(r.Currencies), err
				}},
				{"biggest-10", func(i int) (int, error) {
					from, to := month(i)
					r, err := s.BiggestOutflows(ctx, "t", "u1", from, to, 10)
					return len(r), err
				}},
				{"recurring-year", func(i int) (int, error) {
					from, _ := month(i % 12)
					_, to := month(i%12 + 11)
					_, err := s.RecurringPayments(ctx, "t", "u1", from, to)
					return 1, err
				}},
			}
			for _, r := range reports {
				b.Run(r.name, func(b *testing.B) {
					var took []time.Duration
					for i := 0; b.Loop(); i++ {
						t0 := time.Now()
						n, err := r.run(i)
						took = append(took, time.Since(t0))
						if err != nil {
							b.Fatal(err)
						}
						if n == 0 {
							b.Fatalf("op %d found nothing", i)
						}
					}
					reportP95(b, took)
				})
			}
		})
	}
}

// seedBenchLedger writes BenchmarkLedgerSummary's ledger of 100,000
// entries into s and returns its first day.
func seedBenchLedger(b *testing.B, s *store.Store) time.Time {
	b.Helper()
	ctx := context.Background()
	const (
		entries = 100_000
		users   = 4
		days    = 730
		batch   = 2000
	)
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	currencies := []string{"GBP", "EUR", "USD"}
	categories := []string{"food", "bills", "travel", "shopping", "fun", "health", "software", "groceries"}
	for lo := 0; lo < entries; lo += batch {
		var txs []store.Transaction
		err := s.InTx(ctx, func(tx *store.Store) error {
			txs = txs[:0]
			for i := lo; i < lo+batch && i < entries; i++ {
				user := fmt.Sprintf("u%d", (i/2)%users)
				date := start.AddDate(0, 0, (i*7919)%days).Format(time.DateOnly)
				cur, cat := currencies[i%len(currencies)], categories[(i/users)%len(categories)]
				minor := int64(100 + (i*31)%20000)
				if i%2 == 0 {
					if _, err := tx.AddExpense(ctx, store.Expense{TenantID: "t", UserID: user, Item: fmt.Sprintf("item %d", i),
						AmountMinor: minor, Currency: cur, Date: date, Category: cat}); err != nil {
						return err
					}
					continue
				}
				if i%10 == 1 {
					minor = -minor * 10
				}
				txs = append(txs, store.Transaction{TenantID: "t", UserID: user, DocumentID: "d", Date: date, AmountMinor: -minor,
					Currency: cur, Description: fmt.Sprintf("SHOP %d", i%500), Vendor: fmt.Sprintf("Shop %d", i%500), Category: cat,
					DedupeKey: fmt.Sprintf("k%d", i), ReviewStatus: store.ReviewOK})
			}
			_, err := tx.InsertTransactions(ctx, txs)
			return err
		})
		if err != nil {
			b.Fatalf("seed: %v", err)
		}
	}
	return start
}
