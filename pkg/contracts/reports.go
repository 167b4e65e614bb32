package contracts

// The summaries people ask for: spending by category, merchant or month,
// the biggest expenses of a period and the payments that recur. Each is
// a read of the whole ledger (expenses typed by hand and imported
// transactions), per currency: amounts in different currencies are never
// added together or compared.

// Tool names of the summaries.
const (
	ToolSummarizeSpending = "summarize_spending"
	ToolBiggestExpenses   = "biggest_expenses"
	ToolRecurringPayments = "recurring_payments"
)

// Groupings of summarize_spending.
const (
	SummaryByCategory = "category"
	SummaryByMerchant = "merchant"
	SummaryByMonth    = "month"
)

// SummarizeSpendingArgs adds up spending over a range by category,
// merchant or month.
type SummarizeSpendingArgs struct {
	By    *string `json:"by,omitempty" validate:"omitempty,oneof=category merchant month" jsonschema:"enum=category,enum=merchant,enum=month" jsonschema_description:"How to group: 'category', 'merchant' (where the money went), or 'month' (month over month, each month's change from the one before); category when null."`
	Range *string `json:"range,omitempty" validate:"omitempty,daterange" jsonschema_description:"Date range in the same grammar as list_expenses; when null, this_month, or by month the last 6 months to this one."`
	Limit *int    `json:"limit,omitempty" validate:"omitempty,gte=1,lte=50" jsonschema_description:"Most categories or merchants to name in each currency, biggest first; 10 when null. Totals count them all."`
}

// BiggestExpensesArgs lists the biggest payments of a range.
type BiggestExpensesArgs struct {
	Range *string `json:"range,omitempty" validate:"omitempty,daterange" jsonschema_description:"Date range in the same grammar as list_expenses; this_month when null."`
	Limit *int    `json:"limit,omitempty" validate:"omitempty,gte=1,lte=50" jsonschema_description:"How many to list in each currency, biggest first; 5 when null."`
}

// RecurringPaymentsArgs looks for payments that recur: subscriptions,
// memberships, standing orders.
type RecurringPaymentsArgs struct {
	Range *string `json:"range,omitempty" validate:"omitempty,daterange" jsonschema_description:"Date range to look in, in the same grammar as list_expenses; the last 400 days when null."`
}

// SpendingGroup is what one category or merchant spent: Amount is
// positive, Count the entries it adds up. Name is PlainText; an empty
// category is entries without one.
type SpendingGroup struct {
	Name   string `json:"name"`
	Amount Money  `json:"amount"`
	Count  int    `json:"count"`
}

// CurrencyBreakdown is one currency's spending by category or merchant:
// Total and Count are every entry's; Groups is how many categories or
// merchants there are in all, Top the biggest of them (at most the limit).
type CurrencyBreakdown struct {
	Currency string          `json:"currency"`
	Total    Money           `json:"total"`
	Count    int             `json:"count"`
	Groups   int             `json:"groups"`
	Top      []SpendingGroup `json:"top"`
}

// MonthSpending is one month's spending (Month YYYY-MM) in one currency
// and its change from the month before (positive: more was spent).
type MonthSpending struct {
	Month  string `json:"month"`
	Amount Money  `json:"amount"`
	Count  int    `json:"count"`
	Change Money  `json:"change"`
}

// CurrencyMonths is one currency's months, oldest first, every month of
// the range listed (a month without spending as zero).
type CurrencyMonths struct {
	Currency string          `json:"currency"`
	Months   []MonthSpending `json:"months"`
}

// SpendingSummary is the output of summarize_spending: by category or
// merchant, Currencies; by month, Months; one entry per currency spent,
// sorted by currency. By month, a range longer than 24 months keeps its
// last 24, and a range reaching past this month ends with it.
type SpendingSummary struct {
	Range      string              `json:"range"`
	From       string              `json:"from"`
	To         string              `json:"to"`
	By         string              `json:"by"`
	Currencies []CurrencyBreakdown `json:"currencies,omitempty"`
	Months     []CurrencyMonths    `json:"months,omitempty"`
}

// OutflowView is one payment of the ledger: Amount is positive (money
// out); Description, Merchant and Category are PlainText. Kind is
// LedgerKindExpense or LedgerKindTransaction.
type OutflowView struct {
	Kind        string `json:"kind"`
	Date        string `json:"date"`
	Description string `json:"description"`
	Merchant    string `json:"merchant,omitempty"`
	Category    string `json:"category,omitempty"`
	Amount      Money  `json:"amount"`
}

// BiggestExpenses is the output of biggest_expenses: the biggest payments
// of each currency, sorted by currency, then biggest first.
type BiggestExpenses struct {
	Range    string        `json:"range"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	Expenses []OutflowView `json:"expenses"`
}

// RecurringPayment is a payment that recurs: the same merchant, a similar
// amount (Typical, positive), at a monthly or weekly Rhythm, Count times
// in the range; Last is the latest's date and Next when the one after is
// expected. Merchant is PlainText.
type RecurringPayment struct {
	Merchant string `json:"merchant"`
	Typical  Money  `json:"typical"`
	Rhythm   string `json:"rhythm"`
	Count    int    `json:"count"`
	Last     string `json:"last"`
	Next     string `json:"next"`
}

// RecurringPayments is the output of recurring_payments, sorted by
// currency, then biggest first.
type RecurringPayments struct {
	Range    string             `json:"range"`
	From     string             `json:"from"`
	To       string             `json:"to"`
	Payments []RecurringPayment `json:"payments"`
}
