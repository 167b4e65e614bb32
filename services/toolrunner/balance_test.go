package toolrunner_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// get_balance counts the whole ledger: an imported transaction and an
// expense typed by hand in the range both count as spending, per currency
// and never added across currencies, while money in is not spending and
// entries outside the range or of someone else do not count.
func TestBalanceCountsExpensesAndImportedTransactions(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		for _, e := range []store.Expense{
			{TenantID: "acme", UserID: "ann", Item: "coffee", AmountMinor: 350, Currency: "GBP", Date: "2026-11-03", Category: "food"},
			{TenantID: "acme", UserID: "ann", Item: "museum", AmountMinor: 1500, Currency: "EUR", Date: "2026-11-30", Category: "fun"},
			{TenantID: "acme", UserID: "ann", Item: "october", AmountMinor: 9900, Currency: "GBP", Date: "2026-10-31", Category: "food"},
			{TenantID: "acme", UserID: "bob", Item: "bob's", AmountMinor: 7700, Currency: "GBP", Date: "2026-11-03", Category: "food"},
		} {
			if _, err := s.Store.AddExpense(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		tx := func(key, date string, minor int64, currency, desc string) store.Transaction {
			return store.Transaction{TenantID: "acme", UserID: "ann", DocumentID: "d1", Date: date, AmountMinor: minor, Currency: currency,
				Description: desc, Vendor: desc, Category: "shopping", DedupeKey: key, ReviewStatus: store.ReviewOK, CreatedAt: now}
		}
		if _, err := s.Store.InsertTransactions(ctx, []store.Transaction{
			tx("k1", "2026-11-01", -4200, "GBP", "TESCO"),
			tx("k2", "2026-11-15", -2000, "EUR", "FNAC"),
			tx("k3", "2026-11-20", 250000, "GBP", "SALARY"),
			tx("k4", "2026-12-01", -1000, "GBP", "DECEMBER"),
		}); err != nil {
			t.Fatal(err)
		}
		s.SendToolRequest(request("acme", "ann", "bal", contracts.ToolGetBalance, `{"range":"2026-11"}`))
		res := s.Result("acme", "conv-ann", "bal")
		if !res.OK {
			t.Fatalf("get_balance refused: %+v", res.Error)
		}
		var got contracts.Balance
		if err := json.Unmarshal(res.Data, &got); err != nil {
			t.Fatal(err)
		}
		want := contracts.Balance{Range: "2026-11", From: "2026-11-01", To: "2026-11-30", Count: 5,
			Total: []contracts.Money{{Minor: 1500 + 2000, Currency: "EUR"}, {Minor: 350 + 4200, Currency: "GBP"}}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("balance (-want +got):\n%s", diff)
		}
		if res.Warning != "" {
			t.Errorf("warning = %q, want none", res.Warning)
		}
	})
}
