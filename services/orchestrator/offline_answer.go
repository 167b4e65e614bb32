package orchestrator

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// afterSteps decides once this turn has tool results: the next step of a
// known flow, or an answer built from the results.
func afterSteps(p Prompt) Decision {
	last := p.Steps[len(p.Steps)-1]
	switch last.Decision {
	case "rejected":
		return answer("OK, I won't " + verb(last.Tool) + ".")
	}
	if !last.OK {
		return answer("I couldn't " + verb(last.Tool) + ": " + last.Error)
	}
	switch last.Tool {
	case contracts.ToolSearchGmail:
		var out contracts.MailSearch
		if json.Unmarshal(last.Data, &out) != nil || len(out.Messages) == 0 {
			return answer("I couldn't find a matching statement in your mail.")
		}
		top := out.Messages[0]
		if processRe.MatchString(p.Text) && len(top.Attachments) > 0 {
			return call(contracts.ToolFetchEmailAttachments, contracts.FetchEmailAttachmentsArgs{MessageID: top.ID})
		}
		return answer(describeMail(out.Messages))
	case contracts.ToolFetchEmailAttachments:
		var out contracts.AttachmentsFetched
		_ = json.Unmarshal(last.Data, &out)
		return answer(describeFetch(out))
	case contracts.ToolAddExpense, contracts.ToolUpdateExpense, contracts.ToolDeleteExpense:
		var out contracts.ExpenseChanged
		_ = json.Unmarshal(last.Data, &out)
		e := out.Expense
		what := map[string]string{contracts.ToolAddExpense: "Added", contracts.ToolUpdateExpense: "Updated", contracts.ToolDeleteExpense: "Deleted"}[last.Tool]
		return answer(fmt.Sprintf("%s expense #%d: %s, %s on %s%s.", what, e.ID, e.Item, FormatMoney(e.Amount), e.Date, categorySuffix(e.Category)))
	case contracts.ToolListExpenses:
		var out contracts.ExpenseList
		_ = json.Unmarshal(last.Data, &out)
		return answer(describeExpenses(out))
	case contracts.ToolGetBalance:
		var out contracts.Balance
		_ = json.Unmarshal(last.Data, &out)
		if out.Count == 0 {
			return answer(fmt.Sprintf("You have no expenses %s.", rangeWords(out.Range, out.From, out.To)))
		}
		return answer(fmt.Sprintf("You spent %s %s across %d expense%s.", totals(out.Total), rangeWords(out.Range, out.From, out.To), out.Count, plural(out.Count)))
	case contracts.ToolGetRecentImports:
		var out contracts.RecentImports
		_ = json.Unmarshal(last.Data, &out)
		return answer(describeImports(out))
	case contracts.ToolGetTransactions:
		var out contracts.TransactionList
		_ = json.Unmarshal(last.Data, &out)
		return answer(describeTransactions(out))
	}
	return answer("Done.")
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

// FormatMoney writes minor units as a person reads them: £1,234.50.
func FormatMoney(m contracts.Money) string {
	sym, ok := map[string]string{"GBP": "£", "USD": "$", "EUR": "€"}[m.Currency]
	minor := m.Minor
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	whole := fmt.Sprintf("%d", minor/100)
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	s := fmt.Sprintf("%s.%02d", b.String(), minor%100)
	if !ok {
		return sign + s + " " + m.Currency
	}
	return sign + sym + s
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

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func rangeWords(r, from, to string) string {
	switch r {
	case "today", "yesterday":
		return r
	case "this_week", "last_week", "this_month", "last_month":
		return strings.ReplaceAll(r, "_", " ")
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
	fmt.Fprintf(&b, "Total: %s (%d expense%s).", totals(out.Totals), len(out.Expenses), plural(len(out.Expenses)))
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
			line += fmt.Sprintf("%d transaction%s imported", im.Imported, plural(im.Imported))
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
	fmt.Fprintf(&b, "%d transaction%s:\n", out.Count, plural(out.Count))
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
