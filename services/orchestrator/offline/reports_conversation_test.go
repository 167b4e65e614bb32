package offline_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Asked in chat, the summaries answer at once (no proposal), read from
// the ledger per currency; a number in the question is never an expense.
func TestSummariesWithTheOfflineModel(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1, Now: func() time.Time { return now }})
	ctx := context.Background()
	for _, e := range []store.Expense{
		{TenantID: "acme", UserID: "ann", Item: "rent", AmountMinor: 90000, Currency: "GBP", Date: "2026-11-01", Category: "bills"},
		{TenantID: "acme", UserID: "ann", Item: "museum", AmountMinor: 1500, Currency: "EUR", Date: "2026-11-03", Category: "fun"},
		{TenantID: "acme", UserID: "ann", Item: "rent", AmountMinor: 90000, Currency: "GBP", Date: "2020-09-01", Category: "bills"},
	} {
		if _, err := s.Store.AddExpense(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	ann := s.User("acme", "ann")
	tests := []struct{ give, want string }{
		{"where did my money go this month?", "Your spending this month by category:\nIn EUR:\n- fun: €15.00 (1 entry)\nTotal: €15.00 (1 entry).\nIn GBP:\n- bills: £900.00 (1 entry)\nTotal: £900.00 (1 entry)."},
		{"top 5 expenses in September 2020", "Your biggest expenses in September 2020:\n- 2020-09-01 rent, £900.00 (bills)"},
		{"what subscriptions am I paying?", "I found no payments that recur from 2025-10-19 to 2026-11-22."},
	}
	for _, tt := range tests {
		ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Say(tt.give))
		if ans.Content != tt.want {
			t.Errorf("%q answered\n%s\nwant\n%s", tt.give, ans.Content, tt.want)
		}
	}
	mom := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Say("month over month"))
	if !strings.HasPrefix(mom.Content, "Your spending month over month, from June 2026 to November 2026:\nIn EUR:\n- June 2026: €0.00, the same as May") {
		t.Errorf("month over month answered\n%s", mom.Content)
	}
	left, err := s.Store.ListExpenses(ctx, store.ExpenseFilter{TenantID: "acme", UserID: "ann"})
	if err != nil || len(left) != 3 {
		t.Errorf("ann has %d expenses after asking (%v), want the 3 she had", len(left), err)
	}
}
