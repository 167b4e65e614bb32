package orchestrator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
)

// DescribeStep is the server's own sentence for how a tool step ended: a
// decision the person made, a failure, or the result read aloud (every item
// of a list, with a total). The orchestrator answers with it when the model
// says nothing after tool calls; the offline model answers with it always.
// It never shows internal ids such as call ids. Every value it reads from
// the step (a subject, a file name, an item, an error) is quoted with
// contracts.QuoteText: only the server's own words are markdown.
func DescribeStep(st StepRecord) string {
	r := rowOf(st.Tool)
	verb := cmp.Or(r.verb, "do that")
	switch {
	case st.Decision == "rejected":
		return "OK, I won't " + verb + ". " + AskWhatToChange
	case !st.OK:
		return "I couldn't " + verb + ": " + quote(st.Error)
	case r.describe == nil:
		return "Done."
	}
	return r.describe(st.Data)
}

// AskWhatToChange follows a declined proposal: a no is rarely "never",
// more often "not quite", so the person is asked what to change and the
// proposal's values stay for the edit.
const AskWhatToChange = "What should I change? Tell me, e.g. \"14, not 12.50\" or \"make it yesterday\", and I'll propose it again."

// describeExpenseChange reads aloud the expense a step added, changed or
// deleted, what saying which.
func describeExpenseChange(what string) func(json.RawMessage) string {
	return func(data json.RawMessage) string {
		var out contracts.ExpenseChanged
		_ = json.Unmarshal(data, &out)
		e := out.Expense
		return fmt.Sprintf("%s expense #%d: %s, %s on %s%s.", what, e.ID, quote(e.Item), FormatMoney(e.Amount), e.Date, categorySuffix(e.Category))
	}
}

func describePreferencesSaved(data json.RawMessage) string {
	var out contracts.Preferences
	_ = json.Unmarshal(data, &out)
	return "Saved. Your defaults: " + describePreferences(out) + "."
}

func describeBalance(data json.RawMessage) string {
	var out contracts.Balance
	_ = json.Unmarshal(data, &out)
	var s string
	on := ""
	if out.Query != "" {
		on = " on " + quote(out.Query)
	}
	switch {
	case out.Count == 0 && on != "":
		s = fmt.Sprintf("You have nothing%s %s", on, rangeWords(out.Range, out.From, out.To))
	case out.Count == 0:
		s = fmt.Sprintf("You have no expenses %s", rangeWords(out.Range, out.From, out.To))
	default:
		s = fmt.Sprintf("You spent %s%s %s across %d expense%s", totals(out.Total), on, rangeWords(out.Range, out.From, out.To), out.Count, wording.Plural(out.Count))
	}
	if out.Transfers > 0 {
		// Money moved between the person's own accounts is not spending.
		s += fmt.Sprintf("; %d transfer%s between your accounts left out", out.Transfers, wording.Plural(out.Transfers))
	}
	return s + "."
}

// symbols are the currency signs people read without a code.
var symbols = map[string]string{"GBP": "£", "USD": "$", "EUR": "€", "JPY": "¥", "INR": "₹", "KRW": "₩", "NGN": "₦", "ILS": "₪",
	"PHP": "₱", "VND": "₫", "UAH": "₴", "TRY": "₺", "THB": "฿"}

// FormatMoney writes minor units as a person reads them, with the
// currency's own decimals: £1,234.50, ¥1,200, 1.250 KWD.
func FormatMoney(m contracts.Money) string {
	sign, minor := "", m.Minor
	if minor < 0 {
		sign, minor = "-", -minor
	}
	digits := contracts.FormatMinor(minor, m.Currency)
	whole, frac, hasFrac := strings.Cut(digits, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	if sym, ok := symbols[m.Currency]; ok {
		return sign + sym + b.String()
	}
	return sign + b.String() + " " + m.Currency
}

func totals(ms []contracts.Money) string {
	if len(ms) == 0 {
		return "nothing"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = FormatMoney(m)
	}
	return strings.Join(parts, " + ")
}

func categorySuffix(c string) string {
	if c == "" {
		return ""
	}
	return " (" + quote(c) + ")"
}

// quote is contracts.QuoteText: text from outside, or chosen by a model,
// shown inside a sentence of the server as the characters it holds.
func quote(s string) string { return contracts.QuoteText(s) }

// quoteAll quotes each of ss.
func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = quote(s)
	}
	return out
}

func rangeWords(r, from, to string) string {
	switch r {
	case "today", "yesterday":
		return r
	case "this_week", "last_week", "this_month", "last_month", "this_quarter", "last_quarter", "this_year", "last_year":
		return strings.ReplaceAll(r, "_", " ")
	case "all_time":
		return "in all"
	}
	if d, ok := strings.CutPrefix(r, "since_"); ok {
		return "since " + d
	}
	if len(r) == 4 || strings.Contains(r, "-Q") {
		return "in " + r
	}
	if len(r) == len("2006-01") {
		return "in " + monthWords(r)
	}
	if from == to && from != "" {
		return "on " + from
	}
	if from != "" {
		return "from " + from + " to " + to
	}
	return "in that period"
}

func describeExpenses(data json.RawMessage) string {
	var out contracts.ExpenseList
	_ = json.Unmarshal(data, &out)
	if out.ID != 0 {
		if len(out.Expenses) == 0 {
			return noExpense(out)
		}
		e := out.Expenses[0]
		return fmt.Sprintf("Expense #%d: %s.", e.ID, expenseWords(e))
	}
	where := rangeWords(out.Range, out.From, out.To)
	if out.Category != "" {
		where = "on " + quote(out.Category) + " " + where
	}
	if len(out.Expenses) == 0 {
		return "You have no expenses " + where + "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your expenses %s:\n", where)
	for _, e := range out.Expenses {
		fmt.Fprintf(&b, "- #%d %s %s, %s%s\n", e.ID, e.Date, quote(e.Item), FormatMoney(e.Amount), categorySuffix(e.Category))
	}
	fmt.Fprintf(&b, "Total: %s (%d expense%s).", totals(out.Totals), len(out.Expenses), wording.Plural(len(out.Expenses)))
	return b.String()
}

// expenseWords names an expense as a proposal or an answer shows it:
// "coffee, £3.00 on 2026-11-20 (food)".
func expenseWords(e contracts.ExpenseView) string {
	return fmt.Sprintf("%s, %s on %s%s", quote(e.Item), FormatMoney(e.Amount), e.Date, categorySuffix(e.Category))
}

// noExpense answers a lookup of a number with no expense, naming the
// expenses whose numbers are closest.
func noExpense(out contracts.ExpenseList) string {
	msg := fmt.Sprintf("There is no expense #%d.", out.ID)
	if len(out.Nearby) == 0 {
		return msg + " You have no expenses yet."
	}
	near := make([]string, len(out.Nearby))
	for i, e := range out.Nearby {
		near[i] = fmt.Sprintf("#%d %s", e.ID, expenseWords(e))
	}
	return msg + " The nearest numbers are: " + strings.Join(near, "; ") + "."
}

func describeMail(data json.RawMessage) string {
	var out contracts.MailSearch
	if json.Unmarshal(data, &out) != nil || len(out.Messages) == 0 {
		return "I couldn't find a matching statement in your mail."
	}
	var b strings.Builder
	b.WriteString("I found these messages:\n")
	for _, m := range out.Messages {
		att := "no attachments"
		if len(m.Attachments) > 0 {
			att = strings.Join(quoteAll(m.Attachments), ", ")
		}
		fmt.Fprintf(&b, "- %s, \"%s\" from %s (%s)\n", m.Date.Format("2 Jan 2006"), quote(m.Subject), quote(m.From), att)
	}
	b.WriteString("Say \"import the first one\" to process its statement.")
	return b.String()
}

func describeFetch(data json.RawMessage) string {
	var out contracts.AttachmentsFetched
	_ = json.Unmarshal(data, &out)
	var queued, dup []string
	for _, d := range out.Documents {
		if d.Status == "duplicate" {
			dup = append(dup, quote(d.Filename))
		} else {
			queued = append(queued, quote(d.Filename))
		}
	}
	var parts []string
	if len(queued) > 0 {
		parts = append(parts, "I'm importing "+strings.Join(queued, ", ")+"; you'll get a notification when it's done.")
	}
	if len(dup) > 0 {
		parts = append(parts, strings.Join(dup, ", ")+" was already imported, so nothing new was added from it.")
	}
	if len(parts) == 0 {
		return "That message has no statement attachments to import."
	}
	return strings.Join(parts, " ")
}

func describeImports(data json.RawMessage) string {
	var out contracts.RecentImports
	_ = json.Unmarshal(data, &out)
	if len(out.Imports) == 0 {
		return "You haven't imported any statements recently."
	}
	var b strings.Builder
	if len(out.Imports) == 1 {
		b.WriteString("Your most recent import: ")
	} else {
		b.WriteString("Your recent imports:\n")
	}
	for _, im := range out.Imports {
		line := fmt.Sprintf("%s on %s: ", quote(im.Filename), im.CreatedAt.Format("2 Jan 2006"))
		switch im.Status {
		case "imported":
			line += fmt.Sprintf("%d transaction%s imported", im.Imported, wording.Plural(im.Imported))
		case "failed":
			line += "failed (" + quote(im.Detail) + ")"
		default:
			line += "still importing"
		}
		if len(out.Imports) > 1 {
			line = "- " + line
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimSpace(b.String()) + "."
}

func describeTransactions(data json.RawMessage) string {
	var out contracts.TransactionList
	_ = json.Unmarshal(data, &out)
	if out.ID != 0 && len(out.Transactions) == 0 {
		return noTransaction(out)
	}
	if len(out.Transactions) == 0 {
		return "I found no matching transactions."
	}
	txs := append([]contracts.TransactionView(nil), out.Transactions...)
	sort.SliceStable(txs, func(i, j int) bool { return txs[i].Date < txs[j].Date })
	var b strings.Builder
	fmt.Fprintf(&b, "%d transaction%s:\n", out.Count, wording.Plural(out.Count))
	for _, t := range txs {
		flag := ""
		if t.ReviewStatus == "needs_review" {
			flag = " [needs review]"
		}
		num := ""
		if t.ID != 0 {
			num = fmt.Sprintf("#%d ", t.ID)
		}
		fmt.Fprintf(&b, "- %s%s %s, %s%s\n", num, t.Date, quote(t.Description), FormatMoney(t.Amount), flag)
	}
	if len(txs) < out.Count {
		fmt.Fprintf(&b, "(showing %d of %d)\n", len(txs), out.Count)
	}
	fmt.Fprintf(&b, "Total: %s.", totals(out.Totals))
	return b.String()
}

// describePreferences lists a user's defaults that are set: "currency EUR,
// time zone Europe/Paris, dates written day first".
func describePreferences(p contracts.Preferences) string {
	var parts []string
	if p.Currency != "" {
		parts = append(parts, "currency "+p.Currency)
	}
	if p.Timezone != "" {
		parts = append(parts, "time zone "+p.Timezone)
	}
	if p.DateOrder != "" {
		parts = append(parts, "dates written "+map[string]string{"dmy": "day first", "mdy": "month first", "ymd": "year first"}[p.DateOrder])
	}
	if p.Language != "" {
		parts = append(parts, "answers in "+map[string]string{"en": "English", "fr": "French (français)"}[p.Language])
	}
	return strings.Join(parts, ", ")
}

// Proposals: the server's own sentence for a change, built from its
// canonical args, never from model text; every value in it is quoted.

// money writes an amount the person typed in currency, or in the default
// currency when they named none.
func money(env Env, amount contracts.Amount, currency *string) string {
	c := env.DefaultCurrency
	if currency != nil {
		c = *currency
	}
	minor, err := amount.Minor(c)
	if err != nil {
		return string(amount) + " " + c
	}
	return FormatMoney(contracts.Money{Minor: minor, Currency: c})
}

func proposeAddExpense(args json.RawMessage, s State, env Env) string {
	var a contracts.AddExpenseArgs
	_ = json.Unmarshal(args, &a)
	out := fmt.Sprintf("Add expense '%s' %s", quote(a.Item), money(env, a.Amount, a.Currency))
	if a.Date != nil {
		out += " on " + *a.Date
	}
	if a.Category != nil {
		out += " in " + quote(*a.Category)
	}
	return out + receiptNote(a, s) + "?"
}

func proposeUpdateExpense(args json.RawMessage, _ State, _ Env) string {
	var a contracts.UpdateExpenseArgs
	_ = json.Unmarshal(args, &a)
	var changes []string
	if a.Item != nil {
		changes = append(changes, "item '"+quote(*a.Item)+"'")
	}
	switch {
	case a.Amount != nil && a.Currency != nil:
		changes = append(changes, "amount "+string(*a.Amount)+" "+*a.Currency)
	case a.Amount != nil:
		changes = append(changes, "amount "+string(*a.Amount)) // in the expense's own currency
	case a.Currency != nil:
		changes = append(changes, "currency "+*a.Currency)
	}
	if a.Date != nil {
		changes = append(changes, "date "+*a.Date)
	}
	if a.Category != nil {
		changes = append(changes, "category "+quote(*a.Category))
	}
	return fmt.Sprintf("Change expense #%d: %s?", a.ID, strings.Join(changes, ", "))
}

// readExpense looks up the expense an update or a deletion names.
func readExpense(args json.RawMessage) Call {
	var a struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(args, &a)
	raw, _ := json.Marshal(contracts.ListExpensesArgs{ID: &a.ID})
	return Call{Tool: contracts.ToolListExpenses, Args: raw}
}

// lookedUp is the expense args name, from the result data of the lookup
// of it; missing answers a number with no expense (or a result about
// another number, such as the lookup of a proposal whose number an edit
// changed).
func lookedUp(args, data json.RawMessage) (_ contracts.ExpenseView, missing string) {
	var a struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(args, &a)
	var out contracts.ExpenseList
	if err := json.Unmarshal(data, &out); err != nil || out.ID != a.ID || len(out.Expenses) != 1 || out.Expenses[0].ID != a.ID {
		if out.ID != a.ID {
			out.Nearby = nil
		}
		out.ID = a.ID
		return contracts.ExpenseView{}, noExpense(out)
	}
	return out.Expenses[0], ""
}

// seenDelete is a deletion's sentence showing the expense it deletes.
func seenDelete(args, data json.RawMessage, _ Env) (summary, missing string) {
	e, missing := lookedUp(args, data)
	if missing != "" {
		return "", missing
	}
	return fmt.Sprintf("Delete expense #%d: %s?", e.ID, expenseWords(e)), ""
}

// seenUpdate is an update's sentence showing the expense it changes and
// each changed field before and after.
func seenUpdate(args, data json.RawMessage, env Env) (summary, missing string) {
	e, missing := lookedUp(args, data)
	if missing != "" {
		return "", missing
	}
	var u contracts.UpdateExpenseArgs
	_ = json.Unmarshal(args, &u)
	changes := cmp.Or(strings.Join(changedFields(e, u, env), ", "), "nothing")
	return fmt.Sprintf("Change expense #%d (%s): %s?", e.ID, expenseWords(e), changes), ""
}

// changedFields shows each field an update changes as before → after.
func changedFields(e contracts.ExpenseView, u contracts.UpdateExpenseArgs, env Env) []string {
	var out []string
	if u.Item != nil {
		out = append(out, fmt.Sprintf("item '%s' → '%s'", quote(e.Item), quote(*u.Item)))
	}
	switch {
	case u.Amount != nil:
		currency := cmp.Or(u.Currency, &e.Amount.Currency)
		out = append(out, fmt.Sprintf("amount %s → %s", FormatMoney(e.Amount), money(env, *u.Amount, currency)))
	case u.Currency != nil:
		out = append(out, fmt.Sprintf("currency %s → %s", e.Amount.Currency, *u.Currency))
	}
	if u.Date != nil {
		out = append(out, fmt.Sprintf("date %s → %s", e.Date, *u.Date))
	}
	if u.Category != nil {
		out = append(out, fmt.Sprintf("category %s → %s", quote(cmp.Or(e.Category, "none")), quote(*u.Category)))
	}
	return out
}

func proposeDeleteExpense(args json.RawMessage, _ State, _ Env) string {
	var a contracts.DeleteExpenseArgs
	_ = json.Unmarshal(args, &a)
	return fmt.Sprintf("Delete expense #%d?", a.ID)
}

func proposePreferences(args json.RawMessage, _ State, _ Env) string {
	var a contracts.SetPreferencesArgs
	_ = json.Unmarshal(args, &a)
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	return "Set your " + describePreferences(contracts.Preferences{Currency: deref(a.Currency), Timezone: deref(a.Timezone), DateOrder: deref(a.DateOrder), Language: deref(a.Language)}) + "?"
}

// proposeFetch names the message an import reads from, when it is the
// one the person just found in their mail, and warns about a sender they
// never imported from. Subject, sender, file names and previews come from
// whoever sent the mail: quoted, none can hide or restyle the rest.
func proposeFetch(args json.RawMessage, s State, _ Env) string {
	var a contracts.FetchEmailAttachmentsArgs
	_ = json.Unmarshal(args, &a)
	var m contracts.MailSummary
	if raw, ok := s.Memory["entities.message"]; ok && json.Unmarshal(raw, &m) == nil && m.ID == a.MessageID {
		out := fmt.Sprintf("Import %s from \"%s\" (%s), sent by %s?", strings.Join(quoteAll(m.Attachments), ", "), quote(m.Subject), m.Date.Format("2 Jan 2006"), quote(m.From))
		if len(m.Previews) > 0 {
			out += " " + strings.Join(quoteAll(m.Previews), ". ") + "."
		}
		if m.NewSender {
			out += " You have never imported a statement from this sender before: check that it really is your bank."
		}
		return out
	}
	return "Import the statements attached to that message?"
}
