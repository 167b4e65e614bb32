package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// Expenses and transactions stored before the ledger existed (schema
// version 9) are all in it after the upgrade, each once, with its sign,
// currency, date and description; another user's stay theirs. Every later
// migration runs in this test too, so one that moves rows must lose none.
func TestLedgerHoldsEverythingStoredBeforeIt(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := e.DSN(t)
			t0 := time.Date(2026, 9, 30, 9, 0, 0, 0, time.UTC)
			err := store.MigrateUpTo(ctx, dsn, 9, func(exec func(string, ...any) error) error {
				for _, x := range []struct {
					id         int64
					user, item string
					minor      int64
					ccy, date  string
				}{{1, "olga", "lunch", 1250, "GBP", "2026-09-02"}, {2, "olga", "taxi", 3000, "EUR", "2026-09-03"}, {1, "bob", "bob's book", 999, "GBP", "2026-09-02"}} {
					err := exec(`INSERT INTO expenses (tenant_id, id, user_id, item, amount_minor, currency, date, category, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
						"t1", x.id, x.user, x.item, x.minor, x.ccy, x.date, "dining", t0, t0)
					if err != nil {
						return err
					}
				}
				for i, x := range []struct {
					minor int64
					desc  string
					date  string
				}{{-4599, "TESCO STORES 2231", "2026-09-04"}, {250000, "SALARY ACME LTD", "2026-09-25"}, {-4599, "TESCO STORES 2231", "2026-09-04"}} {
					err := exec(`INSERT INTO transactions (tenant_id, user_id, document_id, date, amount_minor, currency, description, vendor, category, fitid, dedupe_key, review_status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
						"t1", "olga", "doc-1", x.date, x.minor, "GBP", x.desc, "", "", "", fmt.Sprintf("h:%d", i), "ok", t0)
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("database as the previous version left it: %v", err)
			}
			st := storetest.Open(t, dsn)
			page, err := st.ListLedger(ctx, store.LedgerFilter{TenantID: "t1", UserID: "olga"})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, en := range page.Entries {
				got = append(got, fmt.Sprintf("%s %s %d %s %s", en.Kind, en.Date, en.AmountMinor, en.Currency, en.Description))
			}
			want := []string{
				"transaction 2026-09-25 250000 GBP SALARY ACME LTD",
				"transaction 2026-09-04 -4599 GBP TESCO STORES 2231",
				"transaction 2026-09-04 -4599 GBP TESCO STORES 2231",
				"expense 2026-09-03 -3000 EUR taxi",
				"expense 2026-09-02 -1250 GBP lunch",
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("olga's ledger after the upgrade:\n got %q\nwant %q", got, want)
			}
			sum, err := st.LedgerSummary(ctx, "t1", "olga", "2026-09-01", "2026-09-30")
			if err != nil {
				t.Fatal(err)
			}
			if sum.Count != 5 || fmt.Sprint(sum.Spending) != "[{EUR 3000} {GBP 10448}]" || fmt.Sprint(sum.Income) != "[{GBP 250000}]" {
				t.Fatalf("olga's September after the upgrade = count %d, spending %v, income %v; want 5, [EUR 30.00, GBP 104.48], [GBP 2500.00]",
					sum.Count, sum.Spending, sum.Income)
			}
			bob, err := st.ListLedger(ctx, store.LedgerFilter{TenantID: "t1", UserID: "bob"})
			if err != nil || len(bob.Entries) != 1 || bob.Entries[0].Description != "bob's book" {
				t.Fatalf("bob's ledger after the upgrade = %+v, %v; want his one book", bob.Entries, err)
			}
		})
	}
}
