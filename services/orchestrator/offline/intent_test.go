package offline

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// TestQuestionsWithNumbersProposeNothing: questions, searches, notes and
// counts that carry numbers never become an expense to add.
func TestQuestionsWithNumbersProposeNothing(t *testing.T) {
	for _, give := range []string{
		"find my Costco receipts from 2020", "remember pineapple 42", "how many coffees did I buy in the last 30 days?",
		"is 2024 my best year so far?", "was 2023 worse than 2022?", "how many times did I take a taxi in the past 14 days",
		"look for my 2019 Apple invoice", "remind me to pay 50 to Sam", "John owes me 20", "page 3", "I'm 35 years old",
		"what's 15% of 80?", "how much was the 30 pound charge?", "did I spend more than 500 in October?",
	} {
		t.Run(give, func(t *testing.T) {
			d := decide(t, nil, give)
			if d.Kind == orchestrator.DecisionToolCalls && d.Calls[0].Tool == contracts.ToolAddExpense {
				t.Fatalf("got an add proposal %s", d.Calls[0].Args)
			}
		})
	}
}

// TestHistoryAnswerQuotesWhatWasSaid: the landlord's name said turns
// before comes back, and the question itself is not read back.
func TestHistoryAnswerQuotesWhatWasSaid(t *testing.T) {
	q := "what did I say earlier about my landlord?"
	d := decide(t, nil, q)
	check(t, d, `get_chat_history {"query":"landlord"}`)
	data, _ := json.Marshal(contracts.ChatHistory{Messages: []contracts.ChatMessage{
		{Role: "user", Text: "my landlord is called Mr Okafor"},
		{Role: "assistant", Text: "Noted: our conversation keeps it."},
		{Role: "user", Text: q},
	}})
	got, err := Model{}.Decide(context.Background(), orchestrator.Prompt{Text: q, Now: sunday,
		Steps: []orchestrator.StepRecord{{Tool: contracts.ToolGetChatHistory, Args: d.Calls[0].Args, OK: true, Data: data}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got.Content, "Mr Okafor") || strings.Count(got.Content, "landlord") != 1 {
		t.Fatalf("got %q, want the landlord's name once", got.Content)
	}
}

// TestFrenchBalanceAnsweredInFrench: a French question about this month
// is read and answered in French, money written the French way.
func TestFrenchBalanceAnsweredInFrench(t *testing.T) {
	q := "combien ai-je dépensé ce mois-ci ?"
	d, _ := Model{}.Decide(context.Background(), orchestrator.Prompt{Text: q, Now: sunday, Locale: "fr-FR"})
	check(t, d, `get_balance {"range":"this_month"}`)
	data, _ := json.Marshal(contracts.Balance{Range: "this_month", Count: 3, Total: []contracts.Money{{Minor: 123456, Currency: "EUR"}}})
	got, _ := Model{}.Decide(context.Background(), orchestrator.Prompt{Text: q, Now: sunday, Locale: "fr-FR",
		Steps: []orchestrator.StepRecord{{Tool: contracts.ToolGetBalance, Args: d.Calls[0].Args, OK: true, Data: data}}})
	want := "Vous avez dépensé 1\u202f234,56\u00a0€ ce mois-ci, en 3 dépenses."
	if got.Content != want {
		t.Fatalf("got %q, want %q", got.Content, want)
	}
}

// TestFrenchLocaleAnswersInFrench: with a French locale, even an
// unclear message is answered in French.
func TestFrenchLocaleAnswersInFrench(t *testing.T) {
	d, _ := Model{}.Decide(context.Background(), orchestrator.Prompt{Text: "hmm", Now: sunday, Locale: "fr-FR"})
	if !strings.Contains(d.Content, "Je ne suis pas sûr") {
		t.Fatalf("got %q, want French", d.Content)
	}
}
