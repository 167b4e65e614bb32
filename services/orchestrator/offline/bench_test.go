package offline

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// BenchmarkDecide is the offline model's time to read what people type
// most: the turns `purser bench` sends, a greeting and a dated add, each
// on its own; then "mix", the calls one bench user's turns make in turn:
// a read and the answer from its result, a clarifying request, an add,
// its approval and the answer from what it added, each after the open
// exchange before it, as the orchestrator gives it.
func BenchmarkDecide(b *testing.B) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	prompt := func(text string) orchestrator.Prompt {
		return orchestrator.Prompt{Text: text, Now: now, Timezone: "UTC", Currency: "GBP", Tools: contracts.Tools()}
	}
	for _, text := range []string{
		"what did I spend this month?",
		"add coffee £3.50",
		"add a taxi ride",
		"hello",
		"spent 12.40 on lunch yesterday",
		"how much did I spend on groceries this month",
		"add 12.50 coffee",
	} {
		b.Run(text, func(b *testing.B) {
			p := prompt(text)
			for b.Loop() {
				if _, err := (Model{}).Decide(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("mix", func(b *testing.B) {
		mix := benchMix(prompt)
		for b.Loop() {
			for _, p := range mix {
				if _, err := (Model{}).Decide(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// benchMix is the prompts of one round of the bench's turns: read,
// clarify, add and approve, each turn after the exchange before it.
func benchMix(prompt func(string) orchestrator.Prompt) []orchestrator.Prompt {
	after := func(p orchestrator.Prompt, h ...string) orchestrator.Prompt {
		for i, t := range h {
			role := "user"
			if i%2 == 1 {
				role = "assistant"
			}
			p.History = append(p.History, orchestrator.Entry{Role: role, Text: t})
		}
		return p
	}
	step := func(p orchestrator.Prompt, tool, decision string, args, data any) orchestrator.Prompt {
		a, _ := json.Marshal(args)
		d, _ := json.Marshal(data)
		p.Steps = []orchestrator.StepRecord{{Tool: tool, Args: a, OK: true, Data: d, Decision: decision}}
		return p
	}
	const (
		read     = "what did I spend this month?"
		readSaid = "You spent £3.50 this month across 1 expense."
		clar     = "add a taxi ride"
		clarSaid = "How much was taxi ride?"
		add      = "add coffee £3.50"
		added    = "Proposed: Add expense 'coffee' £3.50 on 2026-11-26?"
	)
	rng := "this_month"
	balance := contracts.Balance{Range: rng, From: "2026-11-01", To: "2026-11-30", Count: 1,
		Total: []contracts.Money{{Minor: 350, Currency: "GBP"}}}
	gbp, day := "GBP", "2026-11-26"
	addArgs := contracts.AddExpenseArgs{Item: "coffee", Amount: "3.50", Currency: &gbp, Date: &day}
	changed := contracts.ExpenseChanged{Expense: contracts.ExpenseView{ID: 7, Item: "coffee", Amount: contracts.Money{Minor: 350, Currency: "GBP"}, Date: day}}
	return []orchestrator.Prompt{
		after(prompt(read), add, added, "yes", "Added coffee."),
		step(after(prompt(read), add, added, "yes", "Added coffee."), contracts.ToolGetBalance, "", contracts.GetBalanceArgs{Range: &rng}, balance),
		after(prompt(clar), read, readSaid),
		after(prompt(add), clar, clarSaid),
		step(after(prompt(add), clar, clarSaid), contracts.ToolAddExpense, "approved", addArgs, changed),
	}
}
