package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The summaries answer from the whole ledger, per currency: spending by
// category, by merchant (limited, with every entry in the totals), month
// over month up to this month, the biggest payments, and a subscription
// paid every month. Nothing of another user's counts.
func TestSummariesOfTheLedger(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		for _, e := range []store.Expense{
			{TenantID: "acme", UserID: "ann", Item: "rent", AmountMinor: 90000, Currency: "GBP", Date: "2026-11-01", Category: "bills"},
			{TenantID: "acme", UserID: "ann", Item: "museum", AmountMinor: 1500, Currency: "EUR", Date: "2026-11-30", Category: "fun"},
			{TenantID: "acme", UserID: "ann", Item: "coffee", AmountMinor: 300, Currency: "GBP", Date: "2026-10-03", Category: "food"},
			{TenantID: "acme", UserID: "bob", Item: "bob's", AmountMinor: 7700, Currency: "GBP", Date: "2026-11-03", Category: "food"},
		} {
			if _, err := s.Store.AddExpense(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		var txs []store.Transaction
		tx := func(date string, minor int64, vendor, category string) {
			txs = append(txs, store.Transaction{TenantID: "acme", UserID: "ann", DocumentID: "d1", Date: date, AmountMinor: minor, Currency: "GBP",
				Description: vendor, Vendor: vendor, Category: category, DedupeKey: fmt.Sprintf("k%d", len(txs)), ReviewStatus: store.ReviewOK, CreatedAt: now})
		}
		for _, d := range []string{"2026-08-12", "2026-09-12", "2026-10-12", "2026-11-12"} {
			tx(d, -1099, "NETFLIX", "subscriptions")
		}
		tx("2026-11-05", -4200, "TESCO", "groceries")
		tx("2026-11-20", 250000, "SALARY", "income")
		if _, err := s.Store.InsertTransactions(ctx, txs); err != nil {
			t.Fatal(err)
		}
		gbp := func(minor int64) contracts.Money { return contracts.Money{Minor: minor, Currency: "GBP"} }
		eur := func(minor int64) contracts.Money { return contracts.Money{Minor: minor, Currency: "EUR"} }
		run := func(callID, tool, args string, into any) {
			t.Helper()
			s.SendToolRequest(request("acme", "ann", callID, tool, args, contracts.RoleViewer))
			res := s.Result("acme", "conv-ann", callID)
			if !res.OK {
				t.Fatalf("%s %s refused: %+v", tool, args, res.Error)
			}
			if err := json.Unmarshal(res.Data, into); err != nil {
				t.Fatal(err)
			}
		}

		var byCat contracts.SpendingSummary
		run("s1", contracts.ToolSummarizeSpending, `{"range":"2026-11"}`, &byCat)
		want := contracts.SpendingSummary{Range: "2026-11", From: "2026-11-01", To: "2026-11-30", By: "category", Currencies: []contracts.CurrencyBreakdown{
			{Currency: "EUR", Total: eur(1500), Count: 1, Groups: 1, Top: []contracts.SpendingGroup{{Name: "fun", Amount: eur(1500), Count: 1}}},
			{Currency: "GBP", Total: gbp(90000 + 1099 + 4200), Count: 3, Groups: 3, Top: []contracts.SpendingGroup{
				{Name: "bills", Amount: gbp(90000), Count: 1}, {Name: "groceries", Amount: gbp(4200), Count: 1}, {Name: "subscriptions", Amount: gbp(1099), Count: 1}}},
		}}
		if diff := cmp.Diff(want, byCat); diff != "" {
			t.Errorf("by category (-want +got):\n%s", diff)
		}

		var byMerchant contracts.SpendingSummary
		run("s2", contracts.ToolSummarizeSpending, `{"by":"merchant","range":"2026-11","limit":1}`, &byMerchant)
		if len(byMerchant.Currencies) != 2 || byMerchant.Currencies[1].Total != gbp(95299) || byMerchant.Currencies[1].Groups != 3 ||
			len(byMerchant.Currencies[1].Top) != 1 || byMerchant.Currencies[1].Top[0].Name != "rent" {
			t.Errorf("by merchant, one each = %+v; want rent alone named and all three in GBP's total", byMerchant.Currencies)
		}

		var byMonth contracts.SpendingSummary
		run("s3", contracts.ToolSummarizeSpending, `{"by":"month"}`, &byMonth)
		if byMonth.From != "2026-06-01" || byMonth.To != "2026-11-30" || len(byMonth.Months) != 2 {
			t.Fatalf("month over month = %+v; want June to November in two currencies", byMonth)
		}
		var gotMonths []string
		for _, m := range byMonth.Months[1].Months {
			gotMonths = append(gotMonths, fmt.Sprintf("%s %d %+d", m.Month, m.Amount.Minor, m.Change.Minor))
		}
		wantMonths := []string{"2026-06 0 +0", "2026-07 0 +0", "2026-08 1099 +1099", "2026-09 1099 +0", "2026-10 1399 +300", "2026-11 95299 +93900"}
		if diff := cmp.Diff(wantMonths, gotMonths); diff != "" {
			t.Errorf("GBP month over month (-want +got):\n%s", diff)
		}

		var allTime contracts.SpendingSummary
		run("s4", contracts.ToolSummarizeSpending, `{"by":"month","range":"all_time"}`, &allTime)
		if allTime.From != "2024-12-01" || allTime.To != "2026-11-30" {
			t.Errorf("month over month of all time = %s..%s; want the 24 months to this one", allTime.From, allTime.To)
		}

		var biggest contracts.BiggestExpenses
		run("b1", contracts.ToolBiggestExpenses, `{"range":"2026-11","limit":2}`, &biggest)
		wantBig := []contracts.OutflowView{
			{Kind: "expense", Date: "2026-11-30", Description: "museum", Category: "fun", Amount: eur(1500)},
			{Kind: "expense", Date: "2026-11-01", Description: "rent", Category: "bills", Amount: gbp(90000)},
			{Kind: "transaction", Date: "2026-11-05", Description: "TESCO", Merchant: "TESCO", Category: "groceries", Amount: gbp(4200)},
		}
		if diff := cmp.Diff(wantBig, biggest.Expenses); diff != "" {
			t.Errorf("two biggest of each currency (-want +got):\n%s", diff)
		}

		var rec contracts.RecurringPayments
		run("r1", contracts.ToolRecurringPayments, `{}`, &rec)
		wantRec := contracts.RecurringPayments{Range: "last_400_days", From: "2025-10-19", To: "2026-11-22", Payments: []contracts.RecurringPayment{
			{Merchant: "NETFLIX", Typical: gbp(1099), Rhythm: "monthly", Count: 4, Last: "2026-11-12", Next: "2026-12-12"},
		}}
		if diff := cmp.Diff(wantRec, rec); diff != "" {
			t.Errorf("recurring payments (-want +got):\n%s", diff)
		}
	})
}
