package toolrunner

import (
	"context"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The summaries: spending by category, merchant or month, the biggest
// payments and the payments that recur, all read from the whole ledger
// and added up by the store per currency.

const (
	defaultSummaryLimit = 10
	defaultBiggestLimit = 5
	// summaryMonths is the most months a month over month lists, and
	// defaultSummaryMonths how many it lists when no range is given.
	summaryMonths        = 24
	defaultSummaryMonths = 6
	// defaultRecurringRange is where recurring payments are looked for
	// when no range is given: a year and a bit, so a yearly renewal's
	// month is seen once more.
	defaultRecurringRange = "last_400_days"
)

func summarizeSpending(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.SummarizeSpendingArgs)
	by := contracts.SummaryByCategory
	if a.By != nil {
		by = *a.By
	}
	if by == contracts.SummaryByMonth {
		return spendingByMonth(ctx, tx, c, a.Range)
	}
	name, from, to, err := rangeOrDefault(a.Range, c)
	if err != nil {
		return Output{}, err
	}
	limit := defaultSummaryLimit
	if a.Limit != nil {
		limit = *a.Limit
	}
	sum, err := tx.SpendingBreakdown(ctx, c.Caller.TenantID, c.Caller.UserID, from, to, by, limit)
	if err != nil {
		return Output{}, err
	}
	out := contracts.SpendingSummary{Range: name, From: from, To: to, By: by, Currencies: []contracts.CurrencyBreakdown{}}
	for _, cs := range sum.Currencies {
		b := contracts.CurrencyBreakdown{Currency: cs.Currency, Total: contracts.Money{Minor: cs.Total, Currency: cs.Currency},
			Count: cs.Count, Groups: cs.Groups, Top: []contracts.SpendingGroup{}}
		for _, g := range cs.Top {
			b.Top = append(b.Top, contracts.SpendingGroup{Name: contracts.PlainText(g.Name), Amount: contracts.Money{Minor: g.Minor, Currency: cs.Currency}, Count: g.Count})
		}
		out.Currencies = append(out.Currencies, b)
	}
	return Output{Data: out}, nil
}

// spendingByMonth is summarize_spending by month: the range asked, ending
// this month at the latest and keeping its last summaryMonths months; the
// last defaultSummaryMonths months to this one when no range is given.
func spendingByMonth(ctx context.Context, tx Tx, c Call, r *string) (Output, error) {
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	now := c.Now.In(c.Caller.Location)
	thisMonth := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	endOfMonth := day(thisMonth.AddDate(0, 1, -1))
	var name, from, to string
	if r == nil {
		from, to = day(thisMonth.AddDate(0, 1-defaultSummaryMonths, 0)), endOfMonth
		name = from + ".." + to
	} else {
		var err error
		if name, from, to, err = rangeOrDefault(r, c); err != nil {
			return Output{}, err
		}
		if to > endOfMonth && from <= endOfMonth {
			to = endOfMonth
		}
		t, _ := time.Parse(time.DateOnly, to)
		if earliest := day(time.Date(t.Year(), t.Month()+1-summaryMonths, 1, 0, 0, 0, 0, time.UTC)); from < earliest {
			from = earliest
		}
	}
	sum, err := tx.SpendingByMonth(ctx, c.Caller.TenantID, c.Caller.UserID, from, to)
	if err != nil {
		return Output{}, err
	}
	out := contracts.SpendingSummary{Range: name, From: from, To: to, By: contracts.SummaryByMonth, Months: []contracts.CurrencyMonths{}}
	for _, cm := range sum.Currencies {
		m := contracts.CurrencyMonths{Currency: cm.Currency, Months: make([]contracts.MonthSpending, 0, len(cm.Months))}
		for _, ms := range cm.Months {
			m.Months = append(m.Months, contracts.MonthSpending{Month: ms.Month, Count: ms.Count,
				Amount: contracts.Money{Minor: ms.Minor, Currency: cm.Currency}, Change: contracts.Money{Minor: ms.Change, Currency: cm.Currency}})
		}
		out.Months = append(out.Months, m)
	}
	return Output{Data: out}, nil
}

func biggestExpenses(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.BiggestExpensesArgs)
	name, from, to, err := rangeOrDefault(a.Range, c)
	if err != nil {
		return Output{}, err
	}
	limit := defaultBiggestLimit
	if a.Limit != nil {
		limit = *a.Limit
	}
	rows, err := tx.BiggestOutflows(ctx, c.Caller.TenantID, c.Caller.UserID, from, to, limit)
	if err != nil {
		return Output{}, err
	}
	out := contracts.BiggestExpenses{Range: name, From: from, To: to, Expenses: []contracts.OutflowView{}}
	for _, e := range rows {
		out.Expenses = append(out.Expenses, outflowView(e))
	}
	return Output{Data: out}, nil
}

// outflowView is a ledger entry of money out as the model reads it.
func outflowView(e store.LedgerEntry) contracts.OutflowView {
	kind := contracts.LedgerKindTransaction
	if e.Kind == store.LedgerExpense {
		kind = contracts.LedgerKindExpense
	}
	return contracts.OutflowView{Kind: kind, Date: e.Date, Description: contracts.PlainText(e.Description),
		Merchant: contracts.PlainText(e.Merchant), Category: contracts.PlainText(e.Category),
		Amount: contracts.Money{Minor: -e.AmountMinor, Currency: e.Currency}}
}

// recurringPayments finds the payments that recur in the range (the last
// 400 days when none is given), judged as of today at the latest.
func recurringPayments(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.RecurringPaymentsArgs)
	r := a.Range
	if r == nil {
		d := defaultRecurringRange
		r = &d
	}
	name, from, to, err := rangeOrDefault(r, c)
	if err != nil {
		return Output{}, err
	}
	if now := today(c); to > now && from <= now {
		to = now
	}
	rows, err := tx.RecurringPayments(ctx, c.Caller.TenantID, c.Caller.UserID, from, to)
	if err != nil {
		return Output{}, err
	}
	out := contracts.RecurringPayments{Range: name, From: from, To: to, Payments: []contracts.RecurringPayment{}}
	for _, p := range rows {
		out.Payments = append(out.Payments, contracts.RecurringPayment{Merchant: contracts.PlainText(p.Merchant),
			Typical: contracts.Money{Minor: p.Typical, Currency: p.Currency}, Rhythm: p.Rhythm, Count: p.Count, Last: p.Last, Next: p.Next})
	}
	return Output{Data: out}, nil
}
