package offline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

func TestAnswersListEveryItemWithATotal(t *testing.T) {
	list := contracts.ExpenseList{Range: "this_month", From: "2026-11-01", To: "2026-11-30", Expenses: []contracts.ExpenseView{
		{ID: 1, Item: "groceries", Amount: contracts.Money{Minor: 4235, Currency: "GBP"}, Date: "2026-11-20", Category: "groceries"},
		{ID: 2, Item: "train ticket", Amount: contracts.Money{Minor: 1280, Currency: "GBP"}, Date: "2026-11-21"},
	}, Totals: []contracts.Money{{Minor: 5515, Currency: "GBP"}}}
	data, _ := json.Marshal(list)
	d, _ := Model{}.Decide(context.Background(), orchestrator.Prompt{Text: "show my expenses",
		Steps: []orchestrator.StepRecord{{CallID: "cabc", Tool: contracts.ToolListExpenses, OK: true, Data: data}}})
	want := "Your expenses this month:\n- #1 2026-11-20 groceries, £42.35 (groceries)\n- #2 2026-11-21 train ticket, £12.80\nTotal: £55.15 (2 expenses)."
	if d.Content != want {
		t.Fatalf("answer =\n%s\nwant\n%s", d.Content, want)
	}
	if strings.Contains(d.Content, "cabc") {
		t.Error("answer shows an internal id")
	}
}

func TestBalanceAnswersNameTheRange(t *testing.T) {
	for give, want := range map[string]string{
		"this_year":        "You spent ¥3,500 + £12.50 this year across 2 expenses.",
		"2026-Q1":          "You spent ¥3,500 + £12.50 in 2026-Q1 across 2 expenses.",
		"since_2026-03-01": "You spent ¥3,500 + £12.50 since 2026-03-01 across 2 expenses.",
		"all_time":         "You spent ¥3,500 + £12.50 in all across 2 expenses.",
	} {
		data, _ := json.Marshal(contracts.Balance{Range: give, From: "2026-01-01", To: "2026-12-31", Count: 2,
			Total: []contracts.Money{{Minor: 3500, Currency: "JPY"}, {Minor: 1250, Currency: "GBP"}}})
		d, _ := Model{}.Decide(context.Background(), orchestrator.Prompt{Text: "how much?",
			Steps: []orchestrator.StepRecord{{Tool: contracts.ToolGetBalance, OK: true, Data: data}}})
		if d.Content != want {
			t.Errorf("%s: answer = %q, want %q", give, d.Content, want)
		}
	}
}

func TestStatementFlow(t *testing.T) {
	found, _ := json.Marshal(contracts.MailSearch{Messages: []contracts.MailSummary{{ID: "m42", From: "Visa", Subject: "Your September statement", Attachments: []string{"september_statement.csv"}}}})
	p := orchestrator.Prompt{Text: "Find my last Visa statement and process it", Steps: []orchestrator.StepRecord{{Tool: contracts.ToolSearchGmail, OK: true, Data: found}}}
	d, _ := Model{}.Decide(context.Background(), p)
	if len(d.Calls) != 1 || d.Calls[0].Tool != contracts.ToolFetchEmailAttachments || string(d.Calls[0].Args) != `{"message_id":"m42"}` {
		t.Fatalf("after search = %+v", d)
	}
	fetched, _ := json.Marshal(contracts.AttachmentsFetched{MessageID: "m42", Documents: []contracts.QueuedDocument{{Filename: "september_statement.csv", Status: "queued"}}})
	p.Steps = append(p.Steps, orchestrator.StepRecord{Tool: contracts.ToolFetchEmailAttachments, OK: true, Data: fetched, Decision: "approved"})
	d, _ = Model{}.Decide(context.Background(), p)
	if !strings.Contains(d.Content, "importing september_statement.csv") {
		t.Fatalf("after import = %q", d.Content)
	}
	// Only looking: the messages are listed, nothing is imported.
	p = orchestrator.Prompt{Text: "find my visa statement", Steps: p.Steps[:1]}
	d, _ = Model{}.Decide(context.Background(), p)
	if d.Kind != orchestrator.DecisionAnswer || !strings.Contains(d.Content, "Your September statement") {
		t.Fatalf("search only = %+v", d)
	}
}

func TestTheSameTextGivesTheSameDecision(t *testing.T) {
	for range 20 {
		d := decide(t, nil, "add 12,5 euros lunch on 3 Nov in food")
		check(t, d, `add_expense {"item":"lunch","amount":"12.5","currency":"EUR","date":"2026-11-03","category":"food"}`)
	}
}

// Without a currency named, the person's default decides the decimals.
func TestTheDefaultCurrencyDecidesTheDecimals(t *testing.T) {
	p := orchestrator.Prompt{Text: "add 12.50 ramen", Now: sunday, Currency: "JPY"}
	d, _ := Model{}.Decide(context.Background(), p)
	check(t, d, "clarify: 12.50 has more decimals than JPY allows. How much did you pay for ramen?")
	p.Text = "add 1200 ramen"
	d, _ = Model{}.Decide(context.Background(), p)
	check(t, d, `add_expense {"item":"ramen","amount":"1200","date":"2026-11-22"}`)
	p.Text, p.Currency = "add 12.50 ramen", "GBP"
	d, _ = Model{}.Decide(context.Background(), p)
	check(t, d, `add_expense {"item":"ramen","amount":"12.50","date":"2026-11-22"}`)
}

// FuzzIsClean: a text isClean lets through is one clean's work gives
// back as it is, and the texts at its edges are not let through.
func FuzzIsClean(f *testing.F) {
	for _, s := range []string{"add coffee £3.50", "café crème 4,20 €", "", " ", "a", "a b", "a  b", " a", "a ", "a\tb", "a\nb",
		"a\u00a0b", "a\u202fb", "a\u2009b", "a\u3000b", "it’s", "‘x’", "“x”", "\u201ax", "\u202aabc", "abc\u2069", "\x7f", "a\u0085b",
		"\xff", "a\xc3", "\ufffd", "a\u200bb", "ſpent"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if isClean(text) && cleaned(text) != text {
			t.Fatalf("isClean(%q), but clean gives %q", text, cleaned(text))
		}
	})
}

// TestIsCleanEdges: what clean changes is never taken for clean.
func TestIsCleanEdges(t *testing.T) {
	for _, text := range []string{" ", "a  b", " a", "a ", "a\tb", "a\u00a0b", "a\u202fb", "it’s", "“x”", "\u202aabc", "\x7f", "\xff", "\ufffd"} {
		if isClean(text) {
			t.Errorf("isClean(%q), but clean gives %q", text, cleaned(text))
		}
	}
	for _, text := range []string{"", "add coffee £3.50", "café crème 4,20 €", "a\u200bb", "ſpent"} {
		if !isClean(text) {
			t.Errorf("!isClean(%q)", text)
		}
	}
}
