package offline

import (
	"strconv"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// The summaries people ask for: spending by category, by merchant, month
// over month, the biggest expenses and the payments that recur. A number
// in such a question is a year or how many to list, never an amount.

var (
	recurringRe  = mustCompile(`(?i)\b(subscriptions?|recurring|repeat(ing)? payments?|standing orders?|direct debits?|regular payments?)\b`)
	biggestRe    = mustCompile(`(?i)\b(biggest|largest|top|most expensive|highest|priciest)\b.*\b(expenses?|purchases?|payments?|spend(ing)?|costs?|transactions?|outgoings?|bills?)\b`)
	topNRe       = mustCompile(`(?i)\b(?:top|biggest|largest|highest)\s+(` + howMany + `)\b|\b(` + howMany + `)\s+(?:biggest|largest|highest|most expensive)\b`)
	byMonthRe    = mustCompile(`(?i)\bmonth[\s-]+(?:over|on|by|to)[\s-]+month\b|\bcompare[sd]?\b.*\bmonths?\b|\bmonths?\b.*\bcompare[sd]?\b|\b(?:per|each|every|by)\s+month\b|\bmonthly\s+(?:spending|breakdown|totals?)\b`)
	byMerchantRe = mustCompile(`(?i)\b(?:by|per|each|every)\s+(?:merchant|shop|store|vendor|payee|retailer)s?\b|\bwhich\s+(?:merchants|shops|stores|vendors)\b|\bwho\s+(?:did|do)\s+i\s+(?:pay|spend)\b|\bwhere\s+did\s+i\s+(?:shop|spend)\s+(?:the\s+)?most\b`)
	byCategoryRe = mustCompile(`(?i)\b(?:by|per|each|every)\s+categor(?:y|ies)\b|\bcategor(?:y|ies)\b.*\b(?:spen[dt]|breakdown)\b|\b(?:spen[dt]|spending)\b.*\bcategor(?:y|ies)\b|\bwhere\s+did\s+(?:all\s+)?my\s+money\s+go\b|\bbreak(?:down|\s+down)\b`)
	subsCategory = mustCompile(`(?i)\b(?:on|under|in|for)\s+(?:my\s+)?subscriptions\b`) // a category, not what recurs
	addStart     = mustCompile(`(?i)^(?:please\s+)?(?:add|record|log|put down)\b`)
	thisAndLast  = mustCompile(`(?i)\bthis month\b.*\blast month\b|\blast month\b.*\bthis month\b`)
)

// howMany is a count of things to list, in digits or words.
const howMany = `\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty`

// report reads a question asking for one of the summaries.
func report(text string, now time.Time) (orchestrator.Decision, bool) {
	if addStart.MatchString(text) {
		return orchestrator.Decision{}, false // "add 9.99 netflix subscription"
	}
	switch {
	case recurringRe.MatchString(text) && !subsCategory.MatchString(text):
		if len(findAmounts(withoutDate(text, now))) > 0 {
			return orchestrator.Decision{}, false // "paid 9.99 for a subscription"
		}
		return call(contracts.ToolRecurringPayments, contracts.RecurringPaymentsArgs{}), true
	case byMonthRe.MatchString(text):
		by := contracts.SummaryByMonth
		args := contracts.SummarizeSpendingArgs{By: &by}
		if thisAndLast.MatchString(text) {
			today := midnight(now)
			first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, now.Location())
			r := first.AddDate(0, -1, 0).Format(time.DateOnly) + ".." + first.AddDate(0, 1, -1).Format(time.DateOnly)
			args.Range = &r
		} else if r := rangeOf(text, now); r != "this_month" {
			args.Range = &r
		}
		return call(contracts.ToolSummarizeSpending, args), true
	case byMerchantRe.MatchString(text):
		by, r := contracts.SummaryByMerchant, rangeOf(text, now)
		return call(contracts.ToolSummarizeSpending, contracts.SummarizeSpendingArgs{By: &by, Range: &r}), true
	case byCategoryRe.MatchString(text):
		by, r := contracts.SummaryByCategory, rangeOf(text, now)
		return call(contracts.ToolSummarizeSpending, contracts.SummarizeSpendingArgs{By: &by, Range: &r}), true
	case biggestRe.MatchString(text):
		args := contracts.BiggestExpensesArgs{}
		if m := topNRe.FindStringSubmatch(text); m != nil {
			w := strings.ToLower(m[1] + m[2])
			n, err := strconv.Atoi(w)
			if err != nil {
				n = units[w] + tens[w]
			}
			if n >= 1 && n <= 50 {
				args.Limit = &n
			}
		}
		r := rangeOf(topNRe.ReplaceAllString(text, " "), now)
		args.Range = &r
		return call(contracts.ToolBiggestExpenses, args), true
	}
	return orchestrator.Decision{}, false
}
