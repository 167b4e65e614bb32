// Package offline is the deterministic rule-based model used when no model
// endpoint is configured. It needs no network and gives the same decision
// for the same prompt, so `purser up` is useful without a key and tests
// are exact. It reads everyday English finance requests: amounts with or
// without signs, symbols, codes and decimal commas, relative dates and
// ranges, follow-ups to its own questions and corrections to a proposal.
// What it cannot read exactly it asks about; it never guesses an amount.
package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// Model is the offline model. The zero value is ready to use.
type Model struct{}

var _ orchestrator.LocalModel = Model{}

// Local says the offline model runs in this process: a call made from a
// state that turns out stale costs only the time to make it again.
func (Model) Local() bool { return true }

const helpText = "I can add, change, delete and list your expenses, total what you spent, show where your money went (by category, merchant or month), your biggest expenses and your subscriptions, find bank statements in your mail and import them, show imported transactions, and file entries under categories with rules for next time. Try \"I spent £12.50 on lunch today\", \"what did I spend this month?\", \"where did my money go last month?\" or \"find my last Visa statement and process it\"."

// Clarifying questions the offline model asks. Follow-ups recognise them.
const (
	askAddWhat  = "What item do you want to add, and how much was it?"
	askAmount   = "How much was %s?"
	askItem     = "What was the %s for?"
	askWhichNum = "Which expense number do you mean? Ask me to list your expenses to see the numbers."
	askChangeTo = "What should I change expense %d to? You can give a new amount, date, item or category."
	askWhatFix  = "What should it be instead? You can give a new amount, date, item or category."
)

var (
	greetRe   = mustCompile(`(?i)^(hi|hello|hey|good (morning|afternoon|evening))\b`)
	helpRe    = mustCompile(`(?i)^(help|what can you do)\b`)
	deleteRe  = mustCompile(`(?i)\b(delete|remove|drop|erase)\b`)
	updateRe  = mustCompile(`(?i)\b(change|update|edit|correct|fix|set|rename|modify)\b`)
	mailRe    = mustCompile(`(?i)\b(statements?|e-?mails?|mail|gmail|inbox)\b`)
	processRe = mustCompile(`(?i)\b(process|import|load|fetch|download|add)\b`)
	// newRe asks what a statement would add, without importing it.
	newRe     = mustCompile(`(?i)(\bwhat'?s new\b|\bwhat is new\b|\banything new\b|\bnew in\b|\bpreview\b|\balready (in|imported)\b)`)
	importsRe = mustCompile(`(?i)\bimport(s|ed)?\b`)
	reviewRe  = mustCompile(`(?i)\b(review|check(ing)?|flagged|uncertain|suspicious)\b`)
	vendorRe  = mustCompile(`(?i)\b(?:at|from|with)\s+([A-Z][A-Za-z0-9&'.-]*(?:\s+[A-Z][A-Za-z0-9&'.-]*)*)`)
	spendRe   = mustCompile(`(?i)\b(spend|spent|spending|paid|pay)\b`)
	balanceRe = mustCompile(`(?i)\b(how much|total|balance|sum|what did i spend|what have i spent|what i spent|what i've spent)\b`)
	listRe    = mustCompile(`(?i)\b(list|show|what|which|see)\b.*\b(expenses?|spending|purchases)\b|\bmy expenses\b|\b(list|show|see)\b.*\b(spent|bought|paid|everything)\b|^(my\s+)?(expenses|spending|purchases)\b`)
	addRe     = mustCompile(`(?i)\b(add|spent|paid|bought|record|log|put down|grabbed)\b`)
	verbStart = mustCompile(`(?i)^(please\s+)?(add|i\s+spent|spent|i\s+paid|paid|i\s+bought|bought|record|log|delete|remove|change|update|show|list|what|how|find|import|search|check)\b`)
	listCatRe = mustCompile(`(?i)\b(?:on|for)\s+([a-z][a-z ]{1,30}?)\s*(?:this|last|today|yesterday|in|since|from|between|during|\?|$)`)
	renameRe  = mustCompile(`(?i)\b(?:rename|call)\b.*\bto\s+['"]?([^'"]+?)['"]?\s*$`)
	lastImpRe = mustCompile(`(?i)\b(last|latest|most recent)\s+import\b`)
	statement = mustCompile(`(?i)\b(visa|mastercard|amex|american express|credit card|debit card|checking|current account|savings|monzo|barclays|hsbc|chase|santander|lloyds|natwest|revolut|ing|paypal)\b`)
)

// Decide chooses the next step. Within a turn that already ran tools it
// answers from their results (or takes the next step of a known flow);
// otherwise it reads the user's text.
func (Model) Decide(_ context.Context, p orchestrator.Prompt) (orchestrator.Decision, error) {
	if len(p.Steps) > 0 {
		return afterSteps(p), nil
	}
	if d, ok := readUpload(p); ok {
		return d, nil
	}
	if isFrench(p) {
		p.Text = fromFrench(p.Text)
		return inFrench(fromText(p)), nil
	}
	return fromText(p), nil
}

func clarify(q string) orchestrator.Decision {
	return orchestrator.Decision{Kind: orchestrator.DecisionClarify, Question: q}
}

func answer(s string) orchestrator.Decision {
	return orchestrator.Decision{Kind: orchestrator.DecisionAnswer, Content: s}
}

func call(tool string, args any) orchestrator.Decision {
	raw, _ := json.Marshal(args)
	return orchestrator.Decision{Kind: orchestrator.DecisionToolCalls, Calls: []orchestrator.Call{{Tool: tool, Args: raw}}}
}

// afterSteps decides once this turn has tool results: the next step of a
// known flow (a found statement is imported when the person asked for it),
// or an answer built from the results.
func afterSteps(p orchestrator.Prompt) orchestrator.Decision {
	last := p.Steps[len(p.Steps)-1]
	// The server's sentences are in the person's language; the flows
	// below read the request in the English the readers know.
	lang, asked := "en", p
	if isFrench(p) {
		lang, asked.Text = "fr", fromFrench(p.Text)
	}
	if last.Decision == "rejected" {
		// A question, so that the reply is read as the change to make.
		return clarify(orchestrator.DescribeStepIn(lang, last))
	}
	if d, ok := undoFound(asked, last); ok {
		return d
	}
	if d, ok := uploadRead(lang, last); ok {
		return d
	}
	if last.Tool == contracts.ToolSearchGmail && last.OK && last.Decision == "" && processRe.MatchString(asked.Text) {
		var out contracts.MailSearch
		if json.Unmarshal(last.Data, &out) == nil && len(out.Messages) > 0 && len(out.Messages[0].Attachments) > 0 {
			return call(contracts.ToolFetchEmailAttachments, contracts.FetchEmailAttachmentsArgs{MessageID: out.Messages[0].ID})
		}
	}
	if d, ok := previewFound(asked, last); ok {
		return d
	}
	if d, ok := historyFound(p, last); ok {
		return d
	}
	return answer(orchestrator.DescribeStepIn(lang, last))
}

// clean trims text, makes typographic quotes and spaces plain, and drops
// control and bidirectional-override characters, which never belong in an
// item.
func clean(text string) string {
	if isClean(text) {
		return text // as most of what people type is, and every text cleaned before
	}
	return cleaned(text)
}

// cleaned is clean's work, on a text that needs it.
func cleaned(text string) string {
	text = strings.Map(func(c rune) rune {
		if unicode.IsControl(c) && c != ' ' || c >= 0x202a && c <= 0x202e || c >= 0x2066 && c <= 0x2069 || c == utf8.RuneError {
			return -1
		}
		return c
	}, plainer.Replace(text))
	return strings.Join(strings.Fields(text), " ")
}

// isClean reports whether clean would give text back as it is: it holds
// none of the characters plainer replaces (quotes from ‘ to ”, and
// spaces other than ' '), none clean drops, no invalid UTF-8, and its
// words are set apart by single spaces with none around them.
func isClean(text string) bool {
	if text == "" || text[0] == ' ' || text[len(text)-1] == ' ' {
		return text == ""
	}
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			// No ' ' ends the text, so text[i+1] is there after one.
			if c < ' ' || c == 0x7f || c == ' ' && text[i+1] == ' ' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) || r >= 0x2018 && r <= 0x201d ||
			r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			return false
		}
		i += size
	}
	return true
}

// plainer makes typographic quotes and spaces plain; built once, it is
// safe for concurrent use.
var plainer = strings.NewReplacer("’", "'", "‘", "'", "“", `"`, "”", `"`, "\u00a0", " ", "\u202f", " ", "\t", " ", "\n", " ")

// groupedRe is a number with its thousands set apart by spaces, as French
// writes money: "1 234,56", "12 500 €". Only with a decimal comma or a
// euro sign after it, so "2 100 bags" stays two numbers.
var groupedRe = mustCompile(`\b\d{1,3}(?: \d{3})+(?:,\d{1,2}\b|(?:,\d{1,2})? ?(?:€|EUR\b|euros?\b))`)

// ungroup closes the spaces inside numbers groupedRe finds.
func ungroup(text string) string {
	return groupedRe.ReplaceAllStringFunc(text, func(m string) string {
		num := strings.TrimRightFunc(m, func(r rune) bool { return !unicode.IsDigit(r) })
		return strings.ReplaceAll(num, " ", "") + m[len(num):]
	})
}

func fromText(p orchestrator.Prompt) orchestrator.Decision {
	text := spelledToDigits(ungroup(clean(p.Text)))
	switch {
	case text == "":
		return answer(helpText)
	case greetRe.MatchString(text):
		rest := strings.Trim(greetRe.ReplaceAllString(text, ""), " ,.!")
		if len(strings.Fields(rest)) <= 1 { // "hello", "hi there"
			return answer("Hello! " + helpText)
		}
		text = rest // "hi, add 5 coffee"
	case helpRe.MatchString(text):
		return answer(helpText)
	}
	r := &reply{text: text, now: p.Now, currency: p.Currency}
	if d, ok := followUp(p, r); ok {
		return d
	}
	return r.understood()
}

// understand reads a request on its own, without the conversation.
func understand(text string, now time.Time, currency string) orchestrator.Decision {
	lower := strings.ToLower(text)
	if d, ok := preferences(text); ok {
		return d
	}
	if d, ok := historyLookup(text); ok {
		return d
	}
	if d, ok := reviewOrUndo(text); ok {
		return d
	}
	if d, ok := categoriesAndRules(text, now); ok {
		return d
	}
	if d, ok := note(text, now); ok {
		return d
	}
	if d, ok := searchLookup(text, now); ok {
		return d
	}
	if d, ok := countLookup(text, now); ok {
		return d
	}
	if d, ok := elsewhere(text, now); ok {
		return d
	}
	asks := isQuestion(text)
	switch {
	case deleteRe.MatchString(text) && !asks:
		n, ok := findNumber(text)
		if !ok {
			return clarify(askWhichNum)
		}
		return call(contracts.ToolDeleteExpense, contracts.DeleteExpenseArgs{ID: n})
	case updateRe.MatchString(text) && !mailRe.MatchString(text) && !asks:
		n, ok := findNumber(text)
		if !ok {
			return clarify(askWhichNum)
		}
		return updateCall(n, text, now)
	case mailRe.MatchString(text) && !spendRe.MatchString(text) || strings.Contains(lower, "statement"):
		return call(contracts.ToolSearchGmail, contracts.SearchGmailArgs{Query: statementQuery(text)})
	case importsRe.MatchString(text):
		limit := 5
		if lastImpRe.MatchString(text) {
			limit = 1
		}
		return call(contracts.ToolGetRecentImports, contracts.GetRecentImportsArgs{Limit: &limit})
	case reviewRe.MatchString(text) && strings.Contains(lower, "transaction"):
		st := "needs_review"
		return call(contracts.ToolGetTransactions, contracts.GetTransactionsArgs{ReviewStatus: &st})
	}
	if d, ok := report(text, now); ok {
		return d
	}
	// The readers below ask again whether text is a question; it is
	// the same text, so they are told.
	if d, ok := query(text, now, asks); ok {
		return d
	}
	if wantsAdd(text, now, asks) {
		return addExpense(text, now, currency)
	}
	return unsure(text, now, asks)
}

// wantsAdd reports whether text asks to add an expense: it tells rather
// than asks (asks is isQuestion's word on it), starts with no other verb,
// and says add (or spent, paid…) or names an amount.
func wantsAdd(text string, now time.Time, asks bool) bool {
	if asks || otherVerbRe.MatchString(text) || chitChatRe.MatchString(text) || notSpendingRe.MatchString(text) || pickRe.MatchString(text) {
		return false
	}
	if pronounStart.MatchString(text) && !addRe.MatchString(text) && !spendRe.MatchString(text) {
		return false // "I have 3 kids", "it was 7 degrees"
	}
	return addRe.MatchString(text) || len(findAmounts(withoutDate(withoutClock(text), now))) > 0
}

// query reads a question about spending, in a text that asks
// (isQuestion) or not. An amount marked as money ("£12") makes it an
// expense to add instead, whatever the wording.
func query(text string, now time.Time, asks bool) (orchestrator.Decision, bool) {
	amounts := findAmounts(withoutDate(text, now))
	for _, f := range amounts {
		if f.Marked && !(didSpendRe.MatchString(text) && thresholdRe.MatchString(text)) {
			return orchestrator.Decision{}, false
		}
	}
	if len(amounts) > 0 && spentStart.MatchString(text) && !asks {
		return orchestrator.Decision{}, false // "I spent 40 at Tesco" tells, it does not ask
	}
	isBalance := balanceRe.MatchString(text) || spendRe.MatchString(text) && strings.Contains(strings.ToLower(text), "what") || didSpendRe.MatchString(text)
	// "at Tesco", "on coffee": a total over the ledger narrowed to what
	// the words name (typed and imported alike); a shop asked about with
	// no dates means every date.
	if m := vendorRe.FindStringSubmatch(text); m != nil && (isBalance || spendRe.MatchString(text)) && !isRangeWord(m[1]) {
		if vendor := spentOn(m[1], now); vendor != "" {
			r := shopRange(text, now)
			return call(contracts.ToolGetBalance, contracts.GetBalanceArgs{Range: &r, Query: &vendor}), true
		}
	}
	if isBalance {
		r := rangeOf(text, now)
		args := contracts.GetBalanceArgs{Range: &r}
		if m := spentOnRe.FindStringSubmatch(text); m != nil {
			if what := spentOn(m[1], now); what != "" {
				args.Query = &what
			}
		}
		return call(contracts.ToolGetBalance, args), true
	}
	if ledgerListRe.MatchString(text) {
		r := rangeOf(text, now)
		args := contracts.ListLedgerArgs{Range: &r}
		if m := vendorRe.FindStringSubmatch(text); m != nil && !isRangeWord(m[1]) {
			if shop := spentOn(m[1], now); shop != "" {
				r = shopRange(text, now)
				args.Query, args.Range = &shop, &r
			}
		}
		return call(contracts.ToolListLedger, args), true
	}
	if listRe.MatchString(text) {
		r := rangeOf(text, now)
		args := contracts.ListExpensesArgs{Range: &r}
		if m := listCatRe.FindStringSubmatch(text); m != nil && !isRangeWord(m[1]) && !strings.Contains(m[1], "expense") && !monthOnly(m[1]) {
			c := strings.TrimSpace(m[1])
			args.Category = &c
		}
		return call(contracts.ToolListExpenses, args), true
	}
	return orchestrator.Decision{}, false
}

// thresholdRe compares spending with an amount: "more than £50".
var thresholdRe = mustCompile(`(?i)\b(?:over|more than|above|under|less than|below|at least|at most)\s+\S*\d`)

// spentStart tells of a purchase; didSpendRe asks about spending.
var (
	spentStart = mustCompile(`(?i)^(?:so\s+|today\s+|yesterday\s+)?(?:i|we)(?:'ve| have)?\s+(?:just\s+)?(?:spent|paid|bought|grabbed|got)\b`)
	didSpendRe = mustCompile(`(?i)^(?:so\s+)?(?:did|have|has)\s+(?:i|we)\s+(?:ever\s+)?(?:spent|spend|paid|pay)\b`)
)

// pronounStart is a sentence about someone rather than a purchase.
var pronounStart = mustCompile(`(?i)^(?:i|i'm|i've|we|we're|my|our|it|it's|he|she|they|there|you|je|j'ai|nous|il|elle)\b`)

// ledgerListRe asks for the ledger as a list: transactions, entries,
// everything, typed and imported together ("list my transactions in
// October", "show everything I spent last month").
var ledgerListRe = mustCompile(`(?i)\b(list|show|see|what are|give me)\b.*\b(transactions|entries|ledger|everything)\b|^(my\s+)?(transactions|ledger)\b`)

// spentOnRe finds what spending was on: "spent on coffee", "spend for
// the gym", "spent over 100 on coffee" (the total answers the threshold).
var spentOnRe = mustCompile(`(?i)\b(?:spend|spent|spending|paid|pay)\s+(?:(?:over|more than|above|under|less than|below|at least|at most|around|about)\s+\S+\s+)?(?:on|for)\s+(.+)`)

// phraseEnd cuts a shop's or a thing's name where the question goes on
// with dates or another clause: "Tesco in October", "coffee this month".
var phraseEnd = mustCompile(`(?i)\s+(?:in|on|during|for|since|last|this|between|from|over|so|today|yesterday|before|after|until|till|per|by|each|every|ever|overall|altogether|of all time)\b.*$`)

// shopRange is the range of a question about one shop or thing: the
// dates it names, else every date (a shop asked about with no dates is
// asked about in full).
func shopRange(text string, now time.Time) string {
	r := rangeOf(text, now)
	if r == rangeOf("", now) && !strings.Contains(strings.ToLower(text), "this month") {
		return "all_time"
	}
	return r
}

// spentOn is the name in words that follow "at" or "spent on", cut
// where the question goes on; empty when they only name dates or a
// period ("on 3 Nov", "this month") or say nothing in particular.
func spentOn(words string, now time.Time) string {
	name := strings.TrimSpace(strings.TrimRight(phraseEnd.ReplaceAllString(strings.TrimSpace(words), ""), "?.!, "))
	name = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(name, "the "), "my "))
	if name == "" || isRangeWord(name) || monthOnly(name) {
		return ""
	}
	if _, _, isDate := findDate(name, now); isDate {
		return ""
	}
	switch strings.ToLower(name) {
	case "it", "that", "this", "them", "things", "stuff", "everything", "average", "total", "me", "us":
		return ""
	}
	return name
}

// withoutDate is text without its date phrase, so that the numbers of
// "3 Nov" or "2026-11-01" are not taken for amounts.
func withoutDate(text string, now time.Time) string {
	_, rest, _ := findDate(text, now)
	return stripYears(rest)
}

// stripYears drops numbers that are years in a range ("in 2025", "Q1 2026").
func stripYears(text string) string {
	if !hasDigit(text) {
		return text
	}
	return yearWords.ReplaceAllString(text, " ")
}

var yearWords = mustCompile(`(?i)\b(?:in|of|for|during|since|year|q[1-4]|quarter|` + monthWords + `)\s+(?:19|20)\d{2}\b`)

func isRangeWord(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, w := range []string{"this", "last", "today", "yesterday", "the", "my", "all", "since", "past"} {
		if s == w || strings.HasPrefix(s, w+" ") {
			return true
		}
	}
	return false
}

// addExpense reads an expense to add: item, amount, currency, date and
// category; whatever is missing or unclear becomes one question.
func addExpense(text string, now time.Time, currency string) orchestrator.Decision {
	cat, rest, hasCat := findCategory(withoutClock(text))
	date, rest, hasDate := findDate(rest, now)
	f, ok, ambiguous := pickAmount(findAmounts(rest))
	if ok {
		rest = cutOut(rest, f)
	}
	item := itemFrom(rest)
	switch {
	case ambiguous:
		return clarify(amountQuestion(found{Problem: "which"}, item))
	case !ok && item == "":
		return clarify(askAddWhat)
	case !ok:
		return clarify(fmt.Sprintf(askAmount, item))
	case f.Problem != "":
		return clarify(amountQuestion(f, item))
	case item == "":
		return clarify(fmt.Sprintf(askItem, display(f)))
	}
	if _, err := contracts.Amount(f.Amount).Minor(currency); f.Currency == "" && currency != "" && err != nil {
		f.Currency, f.Problem = currency, "decimals" // 12.50 where amounts are in yen
		return clarify(amountQuestion(f, item))
	}
	args := contracts.AddExpenseArgs{Item: item, Amount: contracts.Amount(f.Amount)}
	if f.Currency != "" {
		args.Currency = &f.Currency
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

// display writes a found amount back as money: £20, 20 CHF, 20.
func display(f found) string {
	for sym, cur := range symbolCurrency {
		if cur == f.Currency {
			return sym + f.Amount
		}
	}
	if f.Currency != "" {
		return f.Amount + " " + f.Currency
	}
	return f.Amount
}

func updateCall(n int64, text string, now time.Time) orchestrator.Decision {
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
	d, rest, hasDate := findDate(rest, now)
	if hasDate {
		args.Date = &d
	}
	if f, ok, _ := pickAmount(findAmounts(rest)); ok {
		if f.Problem != "" {
			return clarify(amountQuestion(f, fmt.Sprintf("expense %d", n)))
		}
		a := contracts.Amount(f.Amount)
		args.Amount = &a
	}
	if args.Item == nil && args.Amount == nil && args.Date == nil && args.Category == nil {
		return clarify(fmt.Sprintf(askChangeTo, n))
	}
	return call(contracts.ToolUpdateExpense, args)
}

// statementQuery keeps the words that identify a statement.
func statementQuery(text string) string {
	q := "statement"
	if m := statement.FindString(text); m != "" {
		q = strings.ToLower(m) + " statement"
	}
	return q
}

// previewFound is the step after a search when the person asked what a
// statement would add ("anything new in my Visa statement?"): the preview
// of the best message's statements, importing nothing.
func previewFound(p orchestrator.Prompt, last orchestrator.StepRecord) (orchestrator.Decision, bool) {
	if last.Tool != contracts.ToolSearchGmail || !last.OK || last.Decision != "" || !newRe.MatchString(p.Text) || processRe.MatchString(p.Text) {
		return orchestrator.Decision{}, false
	}
	var out contracts.MailSearch
	if json.Unmarshal(last.Data, &out) != nil || len(out.Messages) == 0 || len(out.Messages[0].Attachments) == 0 {
		return orchestrator.Decision{}, false
	}
	return call(contracts.ToolPreviewImport, contracts.PreviewImportArgs{MessageID: out.Messages[0].ID}), true
}
