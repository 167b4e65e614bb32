package orchestrator

import (
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
// It never shows internal ids such as call ids.
func DescribeStep(st StepRecord) string {
	switch {
	case st.Decision == "rejected":
		return "OK, I won't " + verb(st.Tool) + "."
	case !st.OK:
		return "I couldn't " + verb(st.Tool) + ": " + st.Error
	}
	switch st.Tool {
	case contracts.ToolSearchGmail:
		var out contracts.MailSearch
		if json.Unmarshal(st.Data, &out) != nil || len(out.Messages) == 0 {
			return "I couldn't find a matching statement in your mail."
		}
		return describeMail(out.Messages)
	case contracts.ToolFetchEmailAttachments:
		var out contracts.AttachmentsFetched
		_ = json.Unmarshal(st.Data, &out)
		return describeFetch(out)
	case contracts.ToolAddExpense, contracts.ToolUpdateExpense, contracts.ToolDeleteExpense:
		var out contracts.ExpenseChanged
		_ = json.Unmarshal(st.Data, &out)
		e := out.Expense
		what := map[string]string{contracts.ToolAddExpense: "Added", contracts.ToolUpdateExpense: "Updated", contracts.ToolDeleteExpense: "Deleted"}[st.Tool]
		return fmt.Sprintf("%s expense #%d: %s, %s on %s%s.", what, e.ID, e.Item, FormatMoney(e.Amount), e.Date, categorySuffix(e.Category))
	case contracts.ToolSetPreferences:
		var out contracts.Preferences
		_ = json.Unmarshal(st.Data, &out)
		return "Saved. Your defaults: " + describePreferences(out) + "."
	case contracts.ToolListExpenses:
		var out contracts.ExpenseList
		_ = json.Unmarshal(st.Data, &out)
		return describeExpenses(out)
	case contracts.ToolGetBalance:
		var out contracts.Balance
		_ = json.Unmarshal(st.Data, &out)
		if out.Count == 0 {
			return fmt.Sprintf("You have no expenses %s.", rangeWords(out.Range, out.From, out.To))
		}
		return fmt.Sprintf("You spent %s %s across %d expense%s.", totals(out.Total), rangeWords(out.Range, out.From, out.To), out.Count, wording.Plural(out.Count))
	case contracts.ToolGetRecentImports:
		var out contracts.RecentImports
		_ = json.Unmarshal(st.Data, &out)
		return describeImports(out)
	case contracts.ToolGetTransactions:
		var out contracts.TransactionList
		_ = json.Unmarshal(st.Data, &out)
		return describeTransactions(out)
	}
	return "Done."
}

func verb(tool string) string {
	switch tool {
	case contracts.ToolAddExpense:
		return "add that expense"
	case contracts.ToolUpdateExpense:
		return "change that expense"
	case contracts.ToolDeleteExpense:
		return "delete that expense"
	case contracts.ToolFetchEmailAttachments:
		return "import that statement"
	case contracts.ToolSearchGmail:
		return "search your mail"
	}
	return "do that"
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
	return " (" + c + ")"
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
	if from == to && from != "" {
		return "on " + from
	}
	if from != "" {
		return "from " + from + " to " + to
	}
	return "in that period"
}

func describeExpenses(out contracts.ExpenseList) string {
	where := rangeWords(out.Range, out.From, out.To)
	if out.Category != "" {
		where = "on " + out.Category + " " + where
	}
	if len(out.Expenses) == 0 {
		return "You have no expenses " + where + "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Your expenses %s:\n", where)
	for _, e := range out.Expenses {
		fmt.Fprintf(&b, "- #%d %s %s, %s%s\n", e.ID, e.Date, e.Item, FormatMoney(e.Amount), categorySuffix(e.Category))
	}
	fmt.Fprintf(&b, "Total: %s (%d expense%s).", totals(out.Totals), len(out.Expenses), wording.Plural(len(out.Expenses)))
	return b.String()
}

func describeMail(msgs []contracts.MailSummary) string {
	var b strings.Builder
	b.WriteString("I found these messages:\n")
	for _, m := range msgs {
		att := "no attachments"
		if len(m.Attachments) > 0 {
			att = strings.Join(m.Attachments, ", ")
		}
		fmt.Fprintf(&b, "- %s, \"%s\" from %s (%s)\n", m.Date.Format("2 Jan 2006"), m.Subject, m.From, att)
	}
	b.WriteString("Say \"import the first one\" to process its statement.")
	return b.String()
}

func describeFetch(out contracts.AttachmentsFetched) string {
	var queued, dup []string
	for _, d := range out.Documents {
		if d.Status == "duplicate" {
			dup = append(dup, d.Filename)
		} else {
			queued = append(queued, d.Filename)
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

func describeImports(out contracts.RecentImports) string {
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
		line := fmt.Sprintf("%s on %s: ", im.Filename, im.CreatedAt.Format("2 Jan 2006"))
		switch im.Status {
		case "imported":
			line += fmt.Sprintf("%d transaction%s imported", im.Imported, wording.Plural(im.Imported))
		case "failed":
			line += "failed (" + im.Detail + ")"
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

func describeTransactions(out contracts.TransactionList) string {
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
		fmt.Fprintf(&b, "- %s %s, %s%s\n", t.Date, t.Description, FormatMoney(t.Amount), flag)
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
	return strings.Join(parts, ", ")
}
