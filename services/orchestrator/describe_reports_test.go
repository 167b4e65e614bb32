package orchestrator

import (
	"encoding/json"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// The summaries read aloud: amounts with their currency, each currency on
// its own, months by name with their change from the month before, and
// text from outside quoted.
func TestDescribeSummaries(t *testing.T) {
	gbp := func(minor int64) contracts.Money { return contracts.Money{Minor: minor, Currency: "GBP"} }
	eur := func(minor int64) contracts.Money { return contracts.Money{Minor: minor, Currency: "EUR"} }
	enc := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	tests := []struct {
		name string
		tool string
		give any
		want string
	}{
		{"by category, one currency", contracts.ToolSummarizeSpending, contracts.SpendingSummary{Range: "2026-03", From: "2026-03-01", To: "2026-03-31", By: "category",
			Currencies: []contracts.CurrencyBreakdown{{Currency: "GBP", Total: gbp(103448), Count: 6, Groups: 3, Top: []contracts.SpendingGroup{
				{Name: "bills", Amount: gbp(100000), Count: 1}, {Name: "", Amount: gbp(3098), Count: 3}}}}},
			"Your spending in March 2026 by category:\n- bills: £1,000.00 (1 entry)\n- no category: £30.98 (3 entries)\n- and 1 more category\nTotal: £1,034.48 (6 entries)."},
		{"by merchant, two currencies", contracts.ToolSummarizeSpending, contracts.SpendingSummary{Range: "last_month", By: "merchant",
			Currencies: []contracts.CurrencyBreakdown{
				{Currency: "EUR", Total: eur(1200), Count: 1, Groups: 1, Top: []contracts.SpendingGroup{{Name: "*CAFE* [x](y)", Amount: eur(1200), Count: 1}}},
				{Currency: "GBP", Total: gbp(500), Count: 2, Groups: 4, Top: []contracts.SpendingGroup{{Name: "TESCO", Amount: gbp(300), Count: 1}}}}},
			"Your spending last month by merchant:\nIn EUR:\n- \\*CAFE\\* \\[x\\](y): €12.00 (1 entry)\nTotal: €12.00 (1 entry).\nIn GBP:\n- TESCO: £3.00 (1 entry)\n- and 3 more merchants\nTotal: £5.00 (2 entries)."},
		{"nothing", contracts.ToolSummarizeSpending, contracts.SpendingSummary{Range: "2020-09", By: "category"}, "You have no spending in September 2020."},
		{"month over month", contracts.ToolSummarizeSpending, contracts.SpendingSummary{From: "2026-09-01", To: "2026-11-30", By: "month",
			Months: []contracts.CurrencyMonths{{Currency: "GBP", Months: []contracts.MonthSpending{
				{Month: "2026-09", Amount: gbp(1000), Change: gbp(0)},
				{Month: "2026-10", Amount: gbp(400), Change: gbp(-600)},
				{Month: "2026-11", Amount: gbp(1400), Change: gbp(1000)}}}}},
			"Your spending month over month, from September 2026 to November 2026:\n- September 2026: £10.00, the same as August\n- October 2026: £4.00, down £6.00 from September\n- November 2026: £14.00, up £10.00 from October"},
		{"biggest", contracts.ToolBiggestExpenses, contracts.BiggestExpenses{Range: "2025", Expenses: []contracts.OutflowView{
			{Date: "2025-03-01", Description: "rent", Category: "bills", Amount: gbp(90000)}, {Date: "2025-07-02", Description: "flight", Amount: eur(30000)}}},
			"Your biggest expenses in 2025:\n- 2025-03-01 rent, £900.00 (bills)\n- 2025-07-02 flight, €300.00"},
		{"no biggest", contracts.ToolBiggestExpenses, contracts.BiggestExpenses{Range: "this_month"}, "You have no expenses this month."},
		{"recurring", contracts.ToolRecurringPayments, contracts.RecurringPayments{Range: "last_400_days", From: "2025-10-19", To: "2026-11-22", Payments: []contracts.RecurringPayment{
			{Merchant: "NETFLIX", Typical: gbp(1099), Rhythm: "monthly", Count: 4, Last: "2026-11-12", Next: "2026-12-12"}}},
			"1 payment recurs:\n- NETFLIX: £10.99 monthly, 4 times, last on 2026-11-12, next expected 2026-12-12"},
		{"no recurring", contracts.ToolRecurringPayments, contracts.RecurringPayments{Range: "last_400_days", From: "2025-10-19", To: "2026-11-22"},
			"I found no payments that recur from 2025-10-19 to 2026-11-22."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DescribeStepIn("en", StepRecord{Tool: tt.tool, OK: true, Data: enc(tt.give)})
			if got != tt.want {
				t.Errorf("DescribeStep =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
