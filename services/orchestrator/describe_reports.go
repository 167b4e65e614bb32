package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// The summaries read aloud: each currency on its own, never added to
// another, amounts with their currency, months by name.

// monthWords names a month YYYY-MM as people say it: "November 2026",
// "novembre 2026".
func monthWords(l lang, m string) string {
	t, err := time.Parse("2006-01", m)
	if err != nil {
		return m
	}
	return l.monthName(t) + t.Format(" 2006")
}

// currencyHeading heads one currency's lines when there is more than one.
func currencyHeading(l lang, b *strings.Builder, n int, currency string) {
	if n > 1 {
		b.WriteString(l.sayf("In %s:\n", "En %s :\n", currency))
	}
}

// The groups a summary is by, and the groups it leaves out.
var (
	nCategory      = noun{"category", "categories", "catégorie", "catégories"}
	nMerchant      = noun{"merchant", "merchants", "commerçant", "commerçants"}
	nMoreCategory  = noun{"more category", "more categories", "autre catégorie", "autres catégories"}
	nMoreMerchants = noun{"more merchant", "more merchants", "autre commerçant", "autres commerçants"}
)

func describeSpendingSummary(l lang, data json.RawMessage) string {
	var out contracts.SpendingSummary
	_ = json.Unmarshal(data, &out)
	if out.By == contracts.SummaryByMonth {
		return describeMonths(l, out)
	}
	where := rangeWords(l, out.Range, out.From, out.To)
	if len(out.Currencies) == 0 {
		return l.sayf("You have no spending %s.", "Vous n'avez aucune dépense %s.", where)
	}
	group, more := nCategory, nMoreCategory
	if out.By == contracts.SummaryByMerchant {
		group, more = nMerchant, nMoreMerchants
	}
	var b strings.Builder
	b.WriteString(l.sayf("Your spending %s by %s:\n", "Vos dépenses %s par %s :\n", where, l.word(1, group)))
	for _, c := range out.Currencies {
		currencyHeading(l, &b, len(out.Currencies), c.Currency)
		for _, g := range c.Top {
			name := quote(g.Name)
			if g.Name == "" {
				name = l.say("no ", "sans ") + l.word(1, group)
			}
			fmt.Fprintf(&b, "- %s%s%s (%s)\n", name, l.say(": ", " : "), l.money(g.Amount), l.count(g.Count, nEntry))
		}
		if n := c.Groups - len(c.Top); n > 0 {
			b.WriteString(l.say("- and ", "- et ") + l.count(n, more) + "\n")
		}
		b.WriteString(l.sayf("Total: %s (%s).\n", "Total : %s (%s).\n", l.money(c.Total), l.count(c.Count, nEntry)))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// describeMonths reads month over month aloud: each month's spending and
// how it compares with the month before.
func describeMonths(l lang, out contracts.SpendingSummary) string {
	from, to := monthWords(l, out.From[:min(7, len(out.From))]), monthWords(l, out.To[:min(7, len(out.To))])
	span := l.sayf("from %s to %s", "entre %s et %s", from, to)
	if len(out.Months) == 0 {
		return l.sayf("You have no spending %s.", "Vous n'avez aucune dépense %s.", span)
	}
	var b strings.Builder
	b.WriteString(l.sayf("Your spending month over month, %s:\n", "Vos dépenses mois par mois, %s :\n", span))
	for _, c := range out.Months {
		currencyHeading(l, &b, len(out.Months), c.Currency)
		for _, m := range c.Months {
			t, _ := time.Parse("2006-01", m.Month)
			before := l.monthName(t.AddDate(0, -1, 0))
			change := l.sayf("the same as %s", "autant qu'en %s", before)
			switch d := m.Change; {
			case d.Minor > 0:
				change = l.sayf("up %s from %s", "en hausse de %s par rapport à %s", l.money(d), before)
			case d.Minor < 0:
				change = l.sayf("down %s from %s", "en baisse de %s par rapport à %s", l.money(contracts.Money{Minor: -d.Minor, Currency: d.Currency}), before)
			}
			fmt.Fprintf(&b, "- %s%s%s, %s\n", monthWords(l, m.Month), l.say(": ", " : "), l.money(m.Amount), change)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func describeBiggestExpenses(l lang, data json.RawMessage) string {
	var out contracts.BiggestExpenses
	_ = json.Unmarshal(data, &out)
	where := rangeWords(l, out.Range, out.From, out.To)
	if len(out.Expenses) == 0 {
		return l.sayf("You have no expenses %s.", "Vous n'avez aucune dépense %s.", where)
	}
	var b strings.Builder
	b.WriteString(l.sayf("Your biggest expenses %s:", "Vos plus grosses dépenses %s :", where))
	for _, e := range out.Expenses {
		fmt.Fprintf(&b, "\n- %s %s, %s%s", l.date(e.Date), quote(e.Description), l.money(e.Amount), categorySuffix(e.Category))
	}
	return b.String()
}

// rhythms are the rhythms of recurring payments, in both languages.
var rhythms = map[string]phrase{"monthly": {"monthly", "mensuel"}, "weekly": {"weekly", "hebdomadaire"}}

func describeRecurringPayments(l lang, data json.RawMessage) string {
	var out contracts.RecurringPayments
	_ = json.Unmarshal(data, &out)
	if len(out.Payments) == 0 {
		return l.sayf("I found no payments that recur %s.", "Je n'ai trouvé aucun paiement récurrent %s.", rangeWords(l, out.Range, out.From, out.To))
	}
	var b strings.Builder
	n := len(out.Payments)
	b.WriteString(l.count(n, nPayment) + " " + l.word(n, noun{"recurs:", "recur:", "récurrent :", "récurrents :"}))
	for _, p := range out.Payments {
		rhythm := p.Rhythm
		if r, ok := rhythms[p.Rhythm]; ok {
			rhythm = r.in(l)
		}
		b.WriteString(l.sayf("\n- %s: %s %s, %d times, last on %s, next expected %s", "\n- %s : %s %s, %d fois, dernier le %s, prochain attendu le %s",
			quote(p.Merchant), l.money(p.Typical), rhythm, p.Count, l.date(p.Last), l.date(p.Next)))
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
