package orchestrator

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// finishAnswer ends the turn with an Answer carrying the legacy fields of
// the original chat function where this turn's steps produced them.
func finishAnswer(s State, env Env, content string) (State, Effects) {
	t := s.Turn
	a := contracts.Answer{TurnID: t.TurnID, Content: content}
	for _, st := range t.Steps {
		if !st.OK {
			continue
		}
		a.Citations = append(a.Citations, contracts.Citation{CallID: st.CallID, Tool: st.Tool})
		switch st.Tool {
		case contracts.ToolAddExpense, contracts.ToolUpdateExpense, contracts.ToolDeleteExpense:
			var out contracts.ExpenseChanged
			if json.Unmarshal(st.Data, &out) != nil {
				continue
			}
			e := out.Expense
			switch st.Tool {
			case contracts.ToolAddExpense:
				a.Added = &e
			case contracts.ToolUpdateExpense:
				a.Updated = &e
			default:
				a.Deleted = &e
			}
		case contracts.ToolListExpenses:
			var out contracts.ExpenseList
			if json.Unmarshal(st.Data, &out) == nil {
				a.Listed = out.Expenses
			}
		case contracts.ToolGetBalance:
			var out contracts.Balance
			if json.Unmarshal(st.Data, &out) == nil {
				a.Balance = &out
			}
		}
	}
	if len(a.Citations) > 50 {
		a.Citations = a.Citations[:50]
	}
	if len(a.Listed) > 500 {
		a.Listed = a.Listed[:500]
	}
	if len(a.Content) > 20000 {
		a.Content = a.Content[:20000]
	}
	out := Output{ID: deriveID("e", t.TurnID, "answer", strconv.Itoa(t.Round)), To: ToAgent, Type: contracts.TypeAnswer, Payload: a}
	s = s.withHistory(Entry{Role: "assistant", Text: content, TurnID: t.TurnID, At: env.Now})
	return endTurn(s), Effects{Outputs: []Output{out}, Stream: a.Content}
}

// fallbackAnswer is built from the results when the model says nothing
// after tool calls: never a hang, never an empty reply.
func fallbackAnswer(_ string, steps []StepRecord) string {
	if len(steps) == 0 {
		return "Done."
	}
	return DescribeStep(steps[len(steps)-1])
}

// summarize is the server's own sentence for a proposal, built from the
// canonical args, never from model text.
func summarize(tool string, args json.RawMessage, s State, env Env) string {
	money := func(amount contracts.Amount, currency *string) string {
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
	switch tool {
	case contracts.ToolAddExpense:
		var a contracts.AddExpenseArgs
		_ = json.Unmarshal(args, &a)
		out := fmt.Sprintf("Add expense '%s' %s", a.Item, money(a.Amount, a.Currency))
		if a.Date != nil {
			out += " on " + *a.Date
		}
		if a.Category != nil {
			out += " in " + *a.Category
		}
		return out + "?"
	case contracts.ToolUpdateExpense:
		var a contracts.UpdateExpenseArgs
		_ = json.Unmarshal(args, &a)
		var changes []string
		if a.Item != nil {
			changes = append(changes, "item '"+*a.Item+"'")
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
			changes = append(changes, "category "+*a.Category)
		}
		return fmt.Sprintf("Change expense #%d: %s?", a.ID, strings.Join(changes, ", "))
	case contracts.ToolDeleteExpense:
		var a contracts.DeleteExpenseArgs
		_ = json.Unmarshal(args, &a)
		return fmt.Sprintf("Delete expense #%d?", a.ID)
	case contracts.ToolSetPreferences:
		var a contracts.SetPreferencesArgs
		_ = json.Unmarshal(args, &a)
		deref := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		return "Set your " + describePreferences(contracts.Preferences{Currency: deref(a.Currency), Timezone: deref(a.Timezone), DateOrder: deref(a.DateOrder)}) + "?"
	case contracts.ToolFetchEmailAttachments:
		var a contracts.FetchEmailAttachmentsArgs
		_ = json.Unmarshal(args, &a)
		var m contracts.MailSummary
		if raw, ok := s.Memory["entities.message"]; ok && json.Unmarshal(raw, &m) == nil && m.ID == a.MessageID {
			out := fmt.Sprintf("Import %s from \"%s\" (%s), sent by %s?", strings.Join(m.Attachments, ", "), m.Subject, m.Date.Format("2 Jan 2006"), m.From)
			if len(m.Previews) > 0 {
				out += " " + strings.Join(m.Previews, ". ") + "."
			}
			if m.NewSender {
				out += " You have never imported a statement from this sender before: check that it really is your bank."
			}
			return out
		}
		return "Import the statements attached to that message?"
	}
	return "Run " + tool + "?"
}

// historyBudget is the prompt's history budget in characters (~4 per token).
const historyBudget = 6000 * 4

// PromptFor assembles what the model is asked with for the current turn.
func PromptFor(s State, env Env) Prompt {
	t := s.Turn
	p := Prompt{TurnID: t.TurnID, Text: t.Text, Now: env.Now.In(userLoc(s)), Timezone: s.Timezone, Currency: env.DefaultCurrency,
		Memory: s.Memory, Steps: t.Steps, Tools: contracts.Tools(), Correction: t.Correction, Failure: t.Failure}
	// The current turn's own entries are the prompt's Text, not history.
	past := s.History
	for len(past) > 0 && past[len(past)-1].TurnID == t.TurnID {
		past = past[:len(past)-1]
	}
	open := openExchange(past)
	p.Earlier = len(open) < len(past) || (len(past) > 0 && len(past) == maxHistory)
	p.History = compactHistory(open, historyBudget)
	return p
}

// openExchange is the end of h that the next message may continue: the
// last request with its reply and, while that request answered an open
// question or proposal, the exchange before it. Anything older is the
// conversation's past, which the model reads through get_chat_history
// when the person refers to it, not in every prompt.
func openExchange(h []Entry) []Entry {
	start := len(h)
	for {
		j := start
		for j > 0 && h[j-1].Role != "user" {
			j--
		}
		for j > 0 && h[j-1].Role == "user" {
			j--
		}
		if j == start {
			return h[start:]
		}
		start = j
		if start == 0 || h[start-1].Role == "user" || !h[start-1].Open {
			return h[start:]
		}
	}
}

// compactHistory keeps the newest entries within budget characters and
// replaces older ones with one summary line. Tool exchanges live in the
// turn's steps, not in history, so nothing is cut mid exchange.
func compactHistory(h []Entry, budget int) []Entry {
	used, keep := 0, len(h)
	for keep > 0 {
		n := len(h[keep-1].Text) + 16
		if used+n > budget {
			break
		}
		used += n
		keep--
	}
	if keep == 0 {
		return h
	}
	dropped := h[:keep]
	var topics []string
	for _, e := range dropped {
		if e.Role == "user" && len(topics) < 5 {
			topics = append(topics, truncate(e.Text, 60))
		}
	}
	summary := Entry{Role: "assistant", At: dropped[len(dropped)-1].At,
		Text: fmt.Sprintf("(Earlier in this conversation, %d messages, including: %s)", len(dropped), strings.Join(topics, "; "))}
	return append([]Entry{summary}, h[keep:]...)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
