package offline_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// TestFrenchConversationWithTheOfflineModel: a person whose client says
// fr-FR adds an expense, is shown the proposal in French, says no and is
// asked in French what to change, approves the edit and reads the result
// in French, then asks what they spent this month and is answered in
// French, money and dates written the French way.
func TestFrenchConversationWithTheOfflineModel(t *testing.T) {
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1})
	marie := s.User("acme", "marie")
	say := frenchTurns(t, marie)

	p := systest.Expect[contracts.Proposal](marie, contracts.TypeProposal, say(contracts.UserTurn{Text: "j'ai dépensé 12,50 € pour le déjeuner"}))
	date := dateOf(t, p)
	day := date[8:10] + "/" + date[5:7] + "/" + date[0:4]
	if want := "Ajouter la dépense « déjeuner » de 12,50\u00a0€ le " + day + " ?"; p.Summary != want {
		t.Fatalf("proposal = %q, want %q", p.Summary, want)
	}
	q := systest.Expect[contracts.Clarify](marie, contracts.TypeClarify, say(contracts.UserTurn{Text: "non"}))
	if want := "D'accord, je ne vais pas ajouter cette dépense. Que faut-il changer ?"; !strings.HasPrefix(q.Question, want) {
		t.Fatalf("after no: %q, want it to start %q", q.Question, want)
	}
	p2 := systest.Expect[contracts.Proposal](marie, contracts.TypeProposal, say(contracts.UserTurn{Text: "14 €"}))
	if want := "Ajouter la dépense « déjeuner » de 14,00\u00a0€ le " + day + " ?"; p2.Summary != want {
		t.Fatalf("edited after no: %q, want %q", p2.Summary, want)
	}
	added := systest.Expect[contracts.Answer](marie, contracts.TypeAnswer,
		say(contracts.UserTurn{Confirm: &contracts.Confirm{ProposalID: p2.ProposalID, Decision: "approve"}}))
	if added.Added == nil {
		t.Fatalf("answer = %+v, want the expense added", added)
	}
	// "other" is the category the store files it under: data, not the server's words.
	if want := fmt.Sprintf("Dépense #%d ajoutée : déjeuner, 14,00\u00a0€ le %s (other).", added.Added.ID, day); added.Content != want {
		t.Fatalf("result = %q, want %q", added.Content, want)
	}
	total := systest.Expect[contracts.Answer](marie, contracts.TypeAnswer, say(contracts.UserTurn{Text: "combien ai-je dépensé ce mois-ci ?"}))
	if want := "Vous avez dépensé 14,00\u00a0€ ce mois-ci, en 1 dépense."; total.Content != want {
		t.Fatalf("balance = %q, want %q", total.Content, want)
	}
}

// frenchTurns sends u's turns as their client does when its locale is
// French: each turn carries fr-FR.
func frenchTurns(t *testing.T, u *systest.User) func(contracts.UserTurn) string {
	n := 0
	return func(turn contracts.UserTurn) string {
		t.Helper()
		n++
		turn.TurnID = fmt.Sprintf("%s-fr-t%d", u.Conversation, n)
		turn.TenantID, turn.UserID, turn.Roles, turn.ConversationID = u.Tenant, u.ID, u.Roles, u.Conversation
		turn.Timezone, turn.Locale, turn.SentAt = "Europe/Paris", "fr-FR", time.Now().UTC()
		u.S.T.Helper()
		b, err := json.Marshal(turn)
		if err != nil {
			t.Fatal(err)
		}
		subject, err := bus.TurnSubject(u.Tenant, u.Conversation)
		if err != nil {
			t.Fatal(err)
		}
		m := bus.NewMessage("turn-"+u.Tenant+"-"+turn.TurnID, b, bus.Headers{Type: contracts.TypeUserTurn, Tenant: u.Tenant, User: u.ID,
			Conversation: u.Conversation, Correlation: turn.TurnID})
		if err := u.S.Pub.Publish(subject, m); err != nil {
			t.Fatalf("publish turn: %v", err)
		}
		return turn.TurnID
	}
}
