package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Offline is the deterministic rule-based model used when no model endpoint
// is configured. It needs no network and gives the same decision for the
// same prompt, so `purser up` is useful without a key and tests are exact.
type Offline struct{}

var _ Model = Offline{}

const helpText = "I can add, change, delete and list your expenses, total what you spent, find bank statements in your mail and import them, and show imported transactions. Try \"I spent £12.50 on lunch today\", \"what did I spend this month?\" or \"find my last Visa statement and process it\"."

// Clarifying questions the offline model asks.
const (
	askAddWhat   = "What item do you want to add, and how much was it?"
	askAddAmount = "How much was %s?"
	askAddItem   = "What was the %s for?"
	askWhichNum  = "Which expense number do you mean? Ask me to list your expenses to see the numbers."
	askChangeTo  = "What should I change expense %d to? You can give a new amount, date, item or category."
)

var (
	greetRe    = regexp.MustCompile(`(?i)^(hi|hello|hey|good (morning|afternoon|evening))\b`)
	helpRe     = regexp.MustCompile(`(?i)^(help|what can you do)\b`)
	deleteRe   = regexp.MustCompile(`(?i)\b(delete|remove|drop|erase)\b`)
	updateRe   = regexp.MustCompile(`(?i)\b(change|update|edit|correct|fix|set|rename|modify)\b`)
	mailRe     = regexp.MustCompile(`(?i)\b(statements?|e-?mails?|mail|gmail|inbox)\b`)
	processRe  = regexp.MustCompile(`(?i)\b(process|import|load|fetch|download|add)\b`)
	importsRe  = regexp.MustCompile(`(?i)\bimport(s|ed)?\b`)
	reviewRe   = regexp.MustCompile(`(?i)\b(review|check(ing)?|flagged|uncertain|suspicious)\b`)
	vendorRe   = regexp.MustCompile(`(?i)\b(?:at|from|with|to)\s+([A-Za-z0-9][A-Za-z0-9&'.-]*(?:\s+[A-Z][A-Za-z0-9&'.-]*)*)`)
	spendRe    = regexp.MustCompile(`(?i)\b(spend|spent|spending|paid|pay)\b`)
	balanceRe  = regexp.MustCompile(`(?i)\b(how much|total|balance|sum)\b`)
	listRe     = regexp.MustCompile(`(?i)\b(list|show|what|which|see)\b.*\b(expenses?|spending|purchases)\b|\bmy expenses\b`)
	addRe      = regexp.MustCompile(`(?i)\b(add|spent|paid|bought|record|log)\b`)
	lastNDays  = regexp.MustCompile(`(?i)\b(?:last|past)\s+(\d{1,3})\s+days?\b`)
	monthName  = regexp.MustCompile(`(?i)\bin\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b`)
	isoMonth   = regexp.MustCompile(`\b(\d{4})-(0[1-9]|1[0-2])\b`)
	listCatRe  = regexp.MustCompile(`(?i)\b(?:on|for|in)\s+([a-z][a-z ]{1,30}?)\s*(?:this|last|today|yesterday|in|$)`)
	renameRe   = regexp.MustCompile(`(?i)\b(?:rename|call)\b.*\bto\s+['"]?([^'"]+?)['"]?\s*$`)
	statementQ = regexp.MustCompile(`(?i)\b(visa|mastercard|amex|american express|credit card|debit card|checking|current account|savings|monzo|barclays|hsbc|chase|santander|lloyds|natwest|revolut|ing|paypal)\b`)
)

// Decide chooses the next step. Within a turn that already ran tools it
// answers from their results (or takes the next step of a known flow);
// otherwise it reads the user's text.
func (Offline) Decide(_ context.Context, p Prompt) (Decision, error) {
	if len(p.Steps) > 0 {
		return afterSteps(p), nil
	}
	return fromText(p), nil
}

func clarify(q string) Decision { return Decision{Kind: DecisionClarify, Question: q} }
func answer(s string) Decision  { return Decision{Kind: DecisionAnswer, Content: s} }
func call(tool string, args any) Decision {
	raw, _ := json.Marshal(args)
	return Decision{Kind: DecisionToolCalls, Calls: []Call{{Tool: tool, Args: raw}}}
}

func fromText(p Prompt) Decision {
	text := strings.TrimSpace(p.Text)
	lower := strings.ToLower(text)
	switch {
	case text == "":
		return answer(helpText)
	case greetRe.MatchString(text) && len(strings.Fields(text)) <= 4:
		return answer("Hello! " + helpText)
	case helpRe.MatchString(text):
		return answer(helpText)
	}
	if d, ok := followUp(p, text); ok {
		return d
	}
	switch {
	case deleteRe.MatchString(text):
		n, ok := findNumber(text)
		if !ok {
			return clarify(askWhichNum)
		}
		return call(contracts.ToolDeleteExpense, contracts.DeleteExpenseArgs{ID: n})
	case updateRe.MatchString(text) && !mailRe.MatchString(text):
		n, ok := findNumber(text)
		if !ok {
			return clarify(askWhichNum)
		}
		return updateCall(n, text, p.Now)
	case mailRe.MatchString(text) && !spendRe.MatchString(text) || strings.Contains(lower, "statement"):
		return call(contracts.ToolSearchGmail, contracts.SearchGmailArgs{Query: statementQuery(text)})
	case importsRe.MatchString(text):
		limit := 5
		if regexp.MustCompile(`(?i)\b(last|latest|most recent)\s+import\b`).MatchString(text) {
			limit = 1
		}
		return call(contracts.ToolGetRecentImports, contracts.GetRecentImportsArgs{Limit: &limit})
	case reviewRe.MatchString(text) && strings.Contains(lower, "transaction"):
		st := "needs_review"
		return call(contracts.ToolGetTransactions, contracts.GetTransactionsArgs{ReviewStatus: &st})
	}
	if _, _, hasAmount := findAmount(text); !hasAmount {
		if m := vendorRe.FindStringSubmatch(text); m != nil && spendRe.MatchString(text) && !isRangeWord(m[1]) {
			vendor := strings.TrimRight(m[1], "?.! ")
			return call(contracts.ToolGetTransactions, contracts.GetTransactionsArgs{Vendor: &vendor})
		}
		if balanceRe.MatchString(text) || (spendRe.MatchString(text) && strings.Contains(lower, "what")) {
			r := rangeOf(text, p.Now)
			return call(contracts.ToolGetBalance, contracts.GetBalanceArgs{Range: &r})
		}
		if listRe.MatchString(text) {
			r := rangeOf(text, p.Now)
			args := contracts.ListExpensesArgs{Range: &r}
			if m := listCatRe.FindStringSubmatch(text); m != nil && !isRangeWord(m[1]) && !strings.Contains(m[1], "expense") && !isMonth(m[1]) {
				c := strings.TrimSpace(m[1])
				args.Category = &c
			}
			return call(contracts.ToolListExpenses, args)
		}
	}
	if addRe.MatchString(text) || hasAmountText(text) {
		return addExpense(text, p.Now)
	}
	return answer("I'm not sure how to help with that. " + helpText)
}

func hasAmountText(text string) bool { _, _, ok := findAmount(text); return ok }

// isMonth reports whether s is a month name such as "October" or "oct".
func isMonth(s string) bool {
	return monthName.MatchString("in " + strings.TrimSpace(s))
}

func isRangeWord(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, w := range []string{"this", "last", "today", "yesterday", "the", "my", "all"} {
		if s == w || strings.HasPrefix(s, w+" ") {
			return true
		}
	}
	return false
}

// followUp reads a short reply to the offline model's own last question.
func followUp(p Prompt, text string) (Decision, bool) {
	if len(p.History) == 0 {
		return Decision{}, false
	}
	last := p.History[len(p.History)-1]
	if last.Role != "assistant" {
		return Decision{}, false
	}
	switch {
	case last.Text == askAddWhat, strings.HasPrefix(last.Text, "How much was "), strings.HasPrefix(last.Text, "What was the "):
		// Put the earlier request and this reply together.
		prev := ""
		if n := len(p.History); n >= 2 && p.History[n-2].Role == "user" {
			prev = p.History[n-2].Text
		}
		if _, _, ok := findAmount(prev); ok && !hasAmountText(text) {
			return addExpense(prev+" on "+text, p.Now), true
		}
		if strings.HasPrefix(last.Text, "How much was ") && hasAmountText(text) {
			item := strings.TrimSuffix(strings.TrimPrefix(last.Text, "How much was "), "?")
			return addExpense(item+" "+text+" "+datePhrase(prev, p.Now), p.Now), true
		}
		if last.Text == askAddWhat {
			return addExpense(text, p.Now), true
		}
	case strings.HasPrefix(last.Text, "What should I change expense "):
		var n int64
		if _, err := fmt.Sscanf(last.Text, "What should I change expense %d to?", &n); err == nil {
			return updateCall(n, text, p.Now), true
		}
	}
	return Decision{}, false
}

// datePhrase keeps an explicit date from an earlier message.
func datePhrase(text string, now time.Time) string {
	if d, _, ok := findDate(text, now); ok {
		return d
	}
	return ""
}

func addExpense(text string, now time.Time) Decision {
	cat, rest, hasCat := findCategory(text)
	m, rest, hasAmount := findAmount(rest)
	date, rest, hasDate := findDate(rest, now)
	item := itemFrom(rest)
	switch {
	case !hasAmount && item == "":
		return clarify(askAddWhat)
	case !hasAmount:
		return clarify(fmt.Sprintf(askAddAmount, item))
	case item == "":
		return clarify(fmt.Sprintf(askAddItem, formatDecimal(m)))
	}
	args := contracts.AddExpenseArgs{Item: item, Amount: contracts.Amount(m.Amount)}
	if m.Currency != "" {
		args.Currency = &m.Currency
	}
	if !hasDate {
		date = now.Format(time.DateOnly)
	}
	args.Date = &date
	if hasCat {
		args.Category = &cat
	}
	return call(contracts.ToolAddExpense, args)
}

func updateCall(n int64, text string, now time.Time) Decision {
	args := contracts.UpdateExpenseArgs{ID: n}
	rest := expNum.ReplaceAllString(text, " ")
	if m := renameRe.FindStringSubmatch(rest); m != nil {
		item := strings.ToLower(strings.TrimSpace(m[1]))
		args.Item = &item
		return call(contracts.ToolUpdateExpense, args)
	}
	if cat, r, ok := findCategory(rest); ok {
		args.Category, rest = &cat, r
	}
	if m, r, ok := findAmount(rest); ok {
		a := contracts.Amount(m.Amount)
		args.Amount, rest = &a, r
	}
	if d, _, ok := findDate(rest, now); ok {
		args.Date = &d
	}
	if args.Item == nil && args.Amount == nil && args.Date == nil && args.Category == nil {
		return clarify(fmt.Sprintf(askChangeTo, n))
	}
	return call(contracts.ToolUpdateExpense, args)
}

// statementQuery keeps the words that identify a statement.
func statementQuery(text string) string {
	q := "statement"
	if m := statementQ.FindString(text); m != "" {
		q = strings.ToLower(m) + " statement"
	}
	return q
}

// rangeOf reads a date range from text, defaulting to this month.
func rangeOf(text string, now time.Time) string {
	lower := strings.ToLower(text)
	if m := lastNDays.FindStringSubmatch(lower); m != nil {
		if n, _ := strconv.Atoi(m[1]); n > 0 && n <= 999 {
			return "last_" + m[1] + "_days"
		}
	}
	for _, r := range []struct{ phrase, rng string }{
		{"today", "today"}, {"yesterday", "yesterday"}, {"this week", "this_week"}, {"last week", "last_week"},
		{"this month", "this_month"}, {"last month", "last_month"},
	} {
		if strings.Contains(lower, r.phrase) {
			return r.rng
		}
	}
	if m := isoMonth.FindString(text); m != "" {
		return m
	}
	if m := monthName.FindStringSubmatch(lower); m != nil {
		mo := months[m[1][:3]]
		y := now.Year()
		if mo > now.Month() {
			y--
		}
		return fmt.Sprintf("%04d-%02d", y, mo)
	}
	return "this_month"
}

func formatDecimal(m money) string {
	sym := map[string]string{"GBP": "£", "USD": "$", "EUR": "€"}[m.Currency]
	return sym + m.Amount
}
