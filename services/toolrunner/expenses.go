package toolrunner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

func expenseView(e store.Expense) contracts.ExpenseView {
	return contracts.ExpenseView{ID: e.ID, Item: e.Item, Amount: contracts.Money{Minor: e.AmountMinor, Currency: e.Currency}, Date: e.Date, Category: e.Category}
}

// totals sums amounts per currency, in order of first appearance.
func totals(amounts []contracts.Money) []contracts.Money {
	out := []contracts.Money{}
	for _, m := range amounts {
		i := slices.IndexFunc(out, func(t contracts.Money) bool { return t.Currency == m.Currency })
		if i < 0 {
			out = append(out, m)
			continue
		}
		out[i].Minor += m.Minor
	}
	return out
}

func today(c Call) string { return c.Now.In(c.Caller.Location).Format(time.DateOnly) }

func notFound(id int64) error {
	return fail(contracts.CodeNotFound, fmt.Sprintf("There is no expense #%d.", id))
}

// defaultCurrency is used when the arguments name none; the orchestrator
// fills in the user's currency, so it is a last resort.
const defaultCurrency = "GBP"

// amountIn reads an amount exactly in currency's minor units (JPY has
// none, KWD three), refusing what does not fit.
func amountIn(a contracts.Amount, currency string) (int64, error) {
	minor, err := a.Minor(currency)
	if err != nil {
		return 0, fail(contracts.CodeInvalidArgs, err.Error())
	}
	if minor <= 0 {
		return 0, fail(contracts.CodeInvalidArgs, "amount: must be more than zero")
	}
	return minor, nil
}

func addExpense(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.AddExpenseArgs)
	var currency string
	if a.Currency != nil {
		currency = *a.Currency
	} else if uc, err := userCurrency(ctx, tx, c); err != nil {
		return Output{}, err
	} else {
		currency = uc
	}
	minor, err := amountIn(a.Amount, currency)
	if err != nil {
		return Output{}, err
	}
	e := store.Expense{TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, Item: strings.TrimSpace(a.Item), AmountMinor: minor,
		Currency: currency, Date: today(c), CreatedAt: c.Now, UpdatedAt: c.Now}
	if a.Date != nil {
		e.Date = *a.Date
	}
	if a.Category != nil {
		e.Category = strings.ToLower(strings.TrimSpace(*a.Category))
	}
	if e.Category, err = categorize(ctx, tx, c, e.Category, e.Item); err != nil {
		return Output{}, err
	}
	added, err := tx.AddExpense(ctx, e)
	if err != nil {
		return Output{}, err
	}
	if err := tx.RecordExpenseChange(ctx, c.ID, nil, &added, c.Now); err != nil {
		return Output{}, err
	}
	return Output{Data: contracts.ExpenseChanged{Expense: expenseView(added)}}, nil
}

func updateExpense(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.UpdateExpenseArgs)
	e, err := tx.GetExpense(ctx, c.Caller.TenantID, c.Caller.UserID, a.ID)
	if errors.Is(err, store.ErrNotFound) {
		return Output{}, notFound(a.ID)
	} else if err != nil {
		return Output{}, err
	}
	before := e
	if a.Item == nil && a.Amount == nil && a.Currency == nil && a.Date == nil && a.Category == nil {
		return Output{}, fail(contracts.CodeInvalidArgs, "Nothing to change: give a new item, amount, currency, date or category.")
	}
	if a.Currency != nil && *a.Currency != e.Currency {
		if a.Amount == nil {
			return Output{}, fail(contracts.CodeInvalidArgs, "amount: give the amount in the new currency as well")
		}
		e.Currency = *a.Currency
	}
	if a.Item != nil {
		e.Item = strings.TrimSpace(*a.Item)
	}
	if a.Amount != nil {
		minor, err := amountIn(*a.Amount, e.Currency)
		if err != nil {
			return Output{}, err
		}
		e.AmountMinor = minor
	}
	if a.Date != nil {
		e.Date = *a.Date
	}
	if a.Category != nil {
		e.Category = strings.ToLower(strings.TrimSpace(*a.Category))
	}
	e.UpdatedAt = c.Now
	updated, err := tx.UpdateExpense(ctx, e)
	if errors.Is(err, store.ErrNotFound) {
		return Output{}, notFound(a.ID)
	} else if err != nil {
		return Output{}, err
	}
	if err := tx.RecordExpenseChange(ctx, c.ID, &before, &updated, c.Now); err != nil {
		return Output{}, err
	}
	return Output{Data: contracts.ExpenseChanged{Expense: expenseView(updated)}}, nil
}

func deleteExpense(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.DeleteExpenseArgs)
	e, err := tx.GetExpense(ctx, c.Caller.TenantID, c.Caller.UserID, a.ID)
	if errors.Is(err, store.ErrNotFound) {
		return Output{}, notFound(a.ID)
	} else if err != nil {
		return Output{}, err
	}
	if err := tx.DeleteExpense(ctx, c.Caller.TenantID, c.Caller.UserID, a.ID); errors.Is(err, store.ErrNotFound) {
		return Output{}, notFound(a.ID)
	} else if err != nil {
		return Output{}, err
	}
	if err := tx.RecordExpenseChange(ctx, c.ID, &e, nil, c.Now); err != nil {
		return Output{}, err
	}
	return Output{Data: contracts.ExpenseChanged{Expense: expenseView(e)}}, nil
}

// rangeOrDefault resolves an optional range, this_month when absent.
func rangeOrDefault(r *string, c Call) (name, from, to string, err error) {
	name = "this_month"
	if r != nil {
		name = *r
	}
	from, to, err = ResolveRange(name, c.Now, c.Caller.Location)
	if err != nil {
		return "", "", "", fail(contracts.CodeInvalidArgs, err.Error())
	}
	return name, from, to, nil
}

// maxRows bounds what one listing reads from the store.
const maxRows = 5000

func listExpenses(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.ListExpensesArgs)
	if a.ID != nil {
		return lookupExpense(ctx, tx, c, *a.ID)
	}
	name, from, to, err := rangeOrDefault(a.Range, c)
	if err != nil {
		return Output{}, err
	}
	f := store.ExpenseFilter{TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, From: from, To: to, Limit: maxRows}
	if a.Category != nil {
		f.Category = strings.ToLower(strings.TrimSpace(*a.Category))
	}
	rows, err := tx.ListExpenses(ctx, f)
	if err != nil {
		return Output{}, err
	}
	out := contracts.ExpenseList{Range: name, From: from, To: to, Category: f.Category, Expenses: []contracts.ExpenseView{}}
	var amounts []contracts.Money
	for _, e := range rows {
		v := expenseView(e)
		out.Expenses = append(out.Expenses, v)
		amounts = append(amounts, v.Amount)
	}
	out.Totals = totals(amounts)
	n := int64(len(rows))
	return Output{Data: out, Total: &n}, nil
}

// nearbyCount is how many expenses a lookup of a missing number names.
const nearbyCount = 3

// lookupExpense lists the caller's expense id alone, whatever its date; when
// there is none, it lists nothing and names the caller's expenses whose
// numbers are closest to id (ties: the lower number), in number order.
func lookupExpense(ctx context.Context, tx Tx, c Call, id int64) (Output, error) {
	out := contracts.ExpenseList{ID: id, Expenses: []contracts.ExpenseView{}, Totals: []contracts.Money{}}
	e, err := tx.GetExpense(ctx, c.Caller.TenantID, c.Caller.UserID, id)
	switch {
	case err == nil:
		v := expenseView(e)
		out.Expenses = append(out.Expenses, v)
		out.Totals = totals([]contracts.Money{v.Amount})
		n := int64(1)
		return Output{Data: out, Total: &n}, nil
	case !errors.Is(err, store.ErrNotFound):
		return Output{}, err
	}
	rows, err := tx.NearestExpenses(ctx, c.Caller.TenantID, c.Caller.UserID, id, nearbyCount)
	if err != nil {
		return Output{}, err
	}
	for _, e := range rows {
		out.Nearby = append(out.Nearby, expenseView(e))
	}
	n := int64(0)
	return Output{Data: out, Total: &n}, nil
}

// getBalance answers what the user spent over a range: the money out of
// every ledger entry in it, expenses typed by hand and imported
// transactions alike, added up per currency by the store (sorted by
// currency, never across currencies). Money in is not spending, and a
// transfer between the person's own accounts is neither: Transfers says
// how many lines were left out for it. Count is the entries in the range.
func getBalance(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.GetBalanceArgs)
	name, from, to, err := rangeOrDefault(a.Range, c)
	if err != nil {
		return Output{}, err
	}
	query := ""
	if a.Query != nil {
		query = strings.TrimSpace(*a.Query)
	}
	sum, err := tx.LedgerSummaryMatching(ctx, c.Caller.TenantID, c.Caller.UserID, from, to, query)
	if err != nil {
		return Output{}, err
	}
	total := make([]contracts.Money, 0, len(sum.Spending))
	for _, m := range sum.Spending {
		total = append(total, contracts.Money{Minor: m.Minor, Currency: m.Currency})
	}
	return Output{Data: contracts.Balance{Range: name, From: from, To: to, Total: total, Count: sum.Count, Transfers: sum.Transfers, Query: query}}, nil
}

// listLedger lists the newest entries of a range, typed and imported
// together, as the ledger reads them (signed, money out negative).
func listLedger(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.ListLedgerArgs)
	name, from, to, err := rangeOrDefault(a.Range, c)
	if err != nil {
		return Output{}, err
	}
	limit := 30
	if a.Limit != nil {
		limit = *a.Limit
	}
	f := store.LedgerFilter{TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, From: from, To: to, Limit: limit}
	if a.Query != nil {
		f.Query = strings.TrimSpace(*a.Query)
	}
	page, err := tx.ListLedger(ctx, f)
	if err != nil {
		return Output{}, err
	}
	out := contracts.LedgerList{Range: name, From: from, To: to, Query: f.Query, Entries: []contracts.EntryView{}, More: page.Next != ""}
	for _, e := range page.Entries {
		out.Entries = append(out.Entries, contracts.EntryView{Kind: e.Kind, ID: e.ID, Date: e.Date, Description: contracts.PlainText(e.Description),
			Merchant: contracts.PlainText(e.Merchant), Amount: contracts.Money{Minor: e.AmountMinor, Currency: e.Currency}, Category: e.Category})
	}
	n := int64(len(out.Entries))
	return Output{Data: out, Total: &n}, nil
}

func getTransactions(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.GetTransactionsArgs)
	if a.ID != nil {
		return lookupTransaction(ctx, tx, c, *a.ID)
	}
	f := store.TransactionFilter{TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, Limit: maxRows}
	if a.FromDate != nil {
		f.From = *a.FromDate
	}
	if a.ToDate != nil {
		f.To = *a.ToDate
	}
	if f.From != "" && f.To != "" && f.To < f.From {
		return Output{}, fail(contracts.CodeInvalidArgs, "to_date: must not be before from_date")
	}
	if a.Vendor != nil {
		f.Vendor = strings.TrimSpace(*a.Vendor)
	}
	if a.Category != nil {
		f.Category = strings.ToLower(strings.TrimSpace(*a.Category))
	}
	if a.ReviewStatus != nil {
		f.ReviewStatus = *a.ReviewStatus
	}
	limit := 50
	if a.Limit != nil {
		limit = *a.Limit
	}
	rows, err := tx.ListTransactions(ctx, f)
	if err != nil {
		return Output{}, err
	}
	out := contracts.TransactionList{Transactions: []contracts.TransactionView{}, Count: len(rows)}
	var amounts []contracts.Money
	for i, t := range rows {
		v := transactionView(t)
		amounts = append(amounts, v.Amount)
		if i < limit {
			out.Transactions = append(out.Transactions, v)
		}
	}
	out.Totals = totals(amounts)
	n := int64(len(rows))
	return Output{Data: out, Total: &n}, nil
}
