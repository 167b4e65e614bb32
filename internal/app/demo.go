package app

import (
	"context"
	"fmt"
	"time"

	"github.com/purser-ai/purser/internal/store"
)

// seedDemo gives the demo user a few expenses on first start, so that a
// newcomer's first "what did I spend this month?" has an answer. It does
// nothing once the demo user has any expense.
func seedDemo(ctx context.Context, st *store.Store, now time.Time) error {
	existing, err := st.ListExpenses(ctx, store.ExpenseFilter{TenantID: DemoTenant, UserID: DemoUser, Limit: 1})
	if err != nil {
		return err
	}
	// The demo account is in pounds and writes dates day first, as its
	// seeded expenses and its mailbox's statements do, unless the demo user
	// changed that since.
	if set, err := st.GetUserSettings(ctx, DemoTenant, DemoUser); err != nil {
		return err
	} else if set.Currency == "" {
		if _, err := st.PutUserSettings(ctx, store.UserSettings{TenantID: DemoTenant, UserID: DemoUser, Currency: "GBP", DateOrder: "dmy", UpdatedAt: now}); err != nil {
			return fmt.Errorf("demo settings: %w", err)
		}
	}
	if len(existing) > 0 {
		return nil
	}
	day := func(back int) string { return now.AddDate(0, 0, -back).Format(time.DateOnly) }
	for _, e := range []store.Expense{
		{Item: "groceries", AmountMinor: 4235, Category: "groceries", Date: day(2)},
		{Item: "train ticket", AmountMinor: 1280, Category: "transport", Date: day(1)},
		{Item: "coffee", AmountMinor: 340, Category: "eating out", Date: day(0)},
	} {
		e.TenantID, e.UserID, e.Currency = DemoTenant, DemoUser, "GBP"
		e.CreatedAt, e.UpdatedAt = now, now
		if _, err := st.AddExpense(ctx, e); err != nil {
			return fmt.Errorf("add demo expense: %w", err)
		}
	}
	return nil
}
