package orchestrator

import (
	"encoding/json"
	"fmt"
	"maps"
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
		if r := rowOf(st.Tool); r.answer != nil {
			r.answer(&a, st.Data)
		}
	}
	a.Citations = recordCitations(t.Steps, a.Citations)
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
// after tool calls, in the language of locale: never a hang, never an
// empty reply.
func fallbackAnswer(locale string, steps []StepRecord) string {
	if len(steps) == 0 {
		return langOf(locale).say("Done.", "C'est fait.")
	}
	return DescribeStepIn(locale, steps[len(steps)-1])
}

// summarize is the server's own sentence for a proposal, built from the
// canonical args, never from model text, in the person's language.
func summarize(tool string, args json.RawMessage, s State, env Env) string {
	if r := rowOf(tool); r.propose != nil {
		return r.propose(args, s, env)
	}
	return langOf(s.Locale).sayf("Run %s?", "Lancer %s ?", tool)
}

// answerAdded, answerUpdated and answerDeleted set the legacy field of
// the expense a step changed.
func answerAdded(a *contracts.Answer, data json.RawMessage) {
	if e, ok := changedExpense(data); ok {
		a.Added = &e
	}
}

func answerUpdated(a *contracts.Answer, data json.RawMessage) {
	if e, ok := changedExpense(data); ok {
		a.Updated = &e
	}
}

func answerDeleted(a *contracts.Answer, data json.RawMessage) {
	if e, ok := changedExpense(data); ok {
		a.Deleted = &e
	}
}

func changedExpense(data json.RawMessage) (contracts.ExpenseView, bool) {
	var out contracts.ExpenseChanged
	if json.Unmarshal(data, &out) != nil {
		return contracts.ExpenseView{}, false
	}
	return out.Expense, true
}

// answerListed sets the legacy list of expenses.
func answerListed(a *contracts.Answer, data json.RawMessage) {
	var out contracts.ExpenseList
	if json.Unmarshal(data, &out) == nil {
		a.Listed = out.Expenses
	}
}

// answerBalance sets the legacy balance.
func answerBalance(a *contracts.Answer, data json.RawMessage) {
	var out contracts.Balance
	if json.Unmarshal(data, &out) == nil {
		a.Balance = &out
	}
}

// historyBudget is the prompt's history budget in characters (~4 per token).
const historyBudget = 6000 * 4

// PromptFor assembles what the model is asked with for the current turn.
func PromptFor(s State, env Env) Prompt {
	t := s.Turn
	p := Prompt{TurnID: t.TurnID, Text: t.Text, Upload: t.Upload, Now: env.Now.In(userLoc(s)), Timezone: s.Timezone, Currency: env.DefaultCurrency, Locale: s.Locale,
		Memory: promptMemory(s.Memory), Steps: t.Steps, Tools: catalogTools(), Correction: t.Correction, Failure: t.Failure}
	// The current turn's own entries are the prompt's Text, not history.
	past := s.History
	for len(past) > 0 && past[len(past)-1].TurnID == t.TurnID {
		past = past[:len(past)-1]
	}
	open := openExchange(past)
	p.Earlier = s.Earlier || len(open) < len(past)
	p.History = compactHistory(open, historyBudget)
	return p
}

// promptListItems is how many items of a remembered list the prompt
// shows. A read keeps its whole list in working memory (every expense of
// the month), and that memory goes into every later call of the
// conversation: unbounded, a person with many expenses would pay for
// all of them in every prompt after one question.
const promptListItems = 20

// promptMemory is working memory as the prompt shows it: each list past
// promptListItems items cut to its first ones and a last item saying how
// many more there are. Memory itself keeps the whole list, so a plan's
// {"$var": "lists.expenses.30.id"} still finds its value.
func promptMemory(m Memory) Memory {
	var out Memory
	for k, v := range m {
		if !strings.HasPrefix(k, "lists.") {
			continue
		}
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil || len(items) <= promptListItems {
			continue
		}
		if out == nil {
			out = maps.Clone(m)
		}
		more, _ := json.Marshal(fmt.Sprintf("... and %d more, not shown; call the tool again to see them", len(items)-promptListItems))
		cut, _ := json.Marshal(append(items[:promptListItems:promptListItems], more))
		out[k] = cut
	}
	if out == nil {
		return m
	}
	return out
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
