package app

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
)

// A user sets their own currency in chat (a change, so it waits for the
// yes), and from then on an amount without one is in that currency; other
// users keep theirs.
func TestUserSetsTheirCurrencyInChat(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	bob := mint(t, info, "demo", "bob", auth.RoleMember)
	approve := func(token, text string) map[string]any {
		t.Helper()
		status, p := chatCall(t, info, token, `{"history":[],"message":"`+text+`"}`)
		proposal, _ := p["proposal"].(map[string]any)
		if status != http.StatusOK || proposal == nil {
			t.Fatalf("%q = %d %v", text, status, p)
		}
		status, a := chatCall(t, info, token, `{"history":[],"confirm":{"proposal_id":"`+proposal["proposal_id"].(string)+`","decision":"approve"}}`)
		if status != http.StatusOK {
			t.Fatalf("approve %q = %d %v", text, status, a)
		}
		a["summary"] = proposal["summary"]
		return a
	}
	set := approve(bob, "set my currency to euros")
	if !strings.Contains(set["summary"].(string), "currency EUR") || !strings.Contains(set["answer"].(string), "EUR") {
		t.Fatalf("setting the currency = %v", set)
	}
	added := approve(bob, "add 12.50 lunch today")["added"].(map[string]any)
	if amount := added["amount"].(map[string]any); amount["currency"] != "EUR" || amount["minor"] != float64(1250) {
		t.Errorf("bob's lunch = %v, want 12.50 EUR", added)
	}
	// In a conversation that already exists, the settings read with it
	// apply too.
	if status, _ := chatCall(t, info, bob, `{"conversation_id":"bob-ongoing","history":[],"message":"hello"}`); status != http.StatusOK {
		t.Fatalf("hello = %d", status)
	}
	status, p := chatCall(t, info, bob, `{"conversation_id":"bob-ongoing","history":[],"message":"add 7 snack today"}`)
	if proposal, _ := p["proposal"].(map[string]any); status != http.StatusOK || proposal == nil || !strings.Contains(proposal["summary"].(string), "€7.00") {
		t.Errorf("a second turn's proposal = %d %v, want the snack in euros", status, p)
	}
	// A time zone set in chat is the one "today" means for them (Kiritimati
	// is UTC+14, so most of the day its date is not UTC's).
	approve(bob, "my time zone is Pacific/Kiritimati")
	kiri, err := time.LoadLocation("Pacific/Kiritimati")
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().In(kiri).Format(time.DateOnly)
	late := approve(bob, "add 2 water today")["added"].(map[string]any)
	if after := time.Now().In(kiri).Format(time.DateOnly); late["date"] != before && late["date"] != after {
		t.Errorf("bob's water dated %v, want today in Kiritimati (%s)", late["date"], before)
	}
	// The demo user's default is still pounds.
	theirs := approve(info.DemoToken, "add 3 tea today")["added"].(map[string]any)
	if amount := theirs["amount"].(map[string]any); amount["currency"] != "GBP" {
		t.Errorf("the demo user's tea = %v, want GBP", theirs)
	}
}
