package offline

import (
	"context"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// FuzzDecide: whatever a person types, after whatever the model said last,
// the offline model decides without panicking, and every call it makes has
// arguments its tool accepts: it asks rather than guess.
func FuzzDecide(f *testing.F) {
	for _, s := range []string{"add 12.50 lunch today", "add -5 pounds lunch", "add 1e308 dollars lunch", "add 12,5 euros lunch",
		"add £99999999999999 lunch", "no, 15 not 12", "how much have I spent since March?", "add ¥12.5 ramen", "paid 50p", "$-5.00",
		"add 1.234.567,89 EUR car", "delete expense 99999999999", "the 31st", "since 2026-02-30", "Q5 2026", "add twenty-five dollars"} {
		f.Add(s, "")
		f.Add(s, proposedLunch)
		f.Add(s, howMuchCoffee)
	}
	f.Fuzz(func(t *testing.T, text, last string) {
		p := orchestrator.Prompt{Text: text, Now: sunday, Currency: "GBP"}
		if last != "" {
			p.History = []orchestrator.Entry{{Role: "user", Text: "add coffee"}, {Role: "assistant", Text: last}}
		}
		d, err := Model{}.Decide(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range d.Calls {
			spec, ok := contracts.LookupTool(c.Tool)
			if !ok {
				t.Fatalf("%q: unknown tool %s", text, c.Tool)
			}
			if _, err := spec.CanonicalArgs(c.Args); err != nil {
				t.Fatalf("%q: %s %s: %v", text, c.Tool, c.Args, err)
			}
		}
		if d.Kind == orchestrator.DecisionClarify && d.Question == "" || d.Kind == orchestrator.DecisionAnswer && d.Content == "" {
			t.Fatalf("%q: empty %s", text, d.Kind)
		}
	})
}
