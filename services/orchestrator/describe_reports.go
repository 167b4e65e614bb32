package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The summaries read aloud: each currency on its own, never added to
// another, amounts with their currency, months by name.

// monthWords names a month YYYY-MM as people say it: "November 2026".
func monthWords(m string) string {
	t, err := time.Parse("2006-01", m)
	if err != nil {
		return m
	}
	return t.Format("January 2006")
}

// entries is "1 entry" or "n entries".
func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// currencyHeading heads one currency's lines when there is more than one.
func currencyHeading(b *strings.Builder, n int, currency string) {
	if n > 1 {
		fmt.Fprintf(b, "In %s:\n", currency)
	}
}

func describeSpendingSummary(data json.RawMessage) string {
	var out contracts.SpendingSummary
	_ = json.Unmarshal(data, &out)
	if out.By == contracts.SummaryByMonth {
		return describeMonths(out)
	}
	where := rangeWords(out.Range, out.From, out.To)
	if len(out.Currencies) == 0 {
		return "You have no spending " + where + "."
	}
	group := "category"
	if out.By == contracts.SummaryByMerchant {
		group = "merchant"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your spending %s by %s:\n", where, group)
	for _, c := range out.Currencies {
		currencyHeading(&b, len(out.Currencies), c.Currency)
		for _, g := range c.Top {
			name := quote(g.Name)
			if g.Name == "" {
				name = "no " + group
			}
			fmt.Fprintf(&b, "- %s: %s (%s)\n", name, FormatMoney(g.Amount), entries(g.Count))
		}
		if more := c.Groups - len(c.Top); more > 0 {
			plural := group + "s"
			if group == "category" {
				plural = "categories"
			}
			if more == 1 {
				plural = group
			}
			fmt.Fprintf(&b, "- and %d more %s\n", more, plural)
		}
		fmt.Fprintf(&b, "Total: %s (%s).\n", FormatMoney(c.Total), entries(c.Count))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// describeMonths reads month over month aloud: each month's spending and
// how it compares with the month before.
func describeMonths(out contracts.SpendingSummary) string {
	span := "from " + monthWords(out.From[:min(7, len(out.From))]) + " to " + monthWords(out.To[:min(7, len(out.To))])
	if len(out.Months) == 0 {
		return "You have no spending " + span + "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your spending month over month, %s:\n", span)
	for _, c := range out.Months {
		currencyHeading(&b, len(out.Months), c.Currency)
		for _, m := range c.Months {
			t, _ := time.Parse("2006-01", m.Month)
			before := t.AddDate(0, -1, 0).Format("January")
			change := "the same as " + before
			switch d := m.Change; {
			case d.Minor > 0:
				change = "up " + FormatMoney(d) + " from " + before
			case d.Minor < 0:
				change = "down " + FormatMoney(contracts.Money{Minor: -d.Minor, Currency: d.Currency}) + " from " + before
			}
			fmt.Fprintf(&b, "- %s: %s, %s\n", monthWords(m.Month), FormatMoney(m.Amount), change)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func describeBiggestExpenses(data json.RawMessage) string {
	var out contracts.BiggestExpenses
	_ = json.Unmarshal(data, &out)
	where := rangeWords(out.Range, out.From, out.To)
	if len(out.Expenses) == 0 {
		return "You have no expenses " + where + "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your biggest expenses %s:", where)
	for _, e := range out.Expenses {
		fmt.Fprintf(&b, "\n- %s %s, %s%s", e.Date, quote(e.Description), FormatMoney(e.Amount), categorySuffix(e.Category))
	}
	return b.String()
}

func describeRecurringPayments(data json.RawMessage) string {
	var out contracts.RecurringPayments
	_ = json.Unmarshal(data, &out)
	if len(out.Payments) == 0 {
		return "I found no payments that recur " + rangeWords(out.Range, out.From, out.To) + "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d payment%s recur:", len(out.Payments), wording.Plural(len(out.Payments)))
	if len(out.Payments) == 1 {
		b.Reset()
		b.WriteString("1 payment recurs:")
	}
	for _, p := range out.Payments {
		fmt.Fprintf(&b, "\n- %s: %s %s, %d times, last on %s, next expected %s", quote(p.Merchant), FormatMoney(p.Typical), p.Rhythm, p.Count, p.Last, p.Next)
	}
	return b.String()
}

// rememberSpendingSummary keeps the summary and its range.
func rememberSpendingSummary(data json.RawMessage) []memoryValue {
	return []memoryValue{{"entities.spending_summary", data}, {"params.range", field(data, "range")}}
}

// rememberBiggestExpenses keeps the payments listed and their range.
func rememberBiggestExpenses(data json.RawMessage) []memoryValue {
	return []memoryValue{{"lists.biggest_expenses", field(data, "expenses")}, {"params.range", field(data, "range")}}
}

// rememberRecurringPayments keeps the recurring payments found.
func rememberRecurringPayments(data json.RawMessage) []memoryValue {
	return []memoryValue{{"lists.recurring_payments", field(data, "payments")}}
}
