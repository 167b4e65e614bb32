package ingress

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/pkg/contracts"
)

func TestNewTurn(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 30, 0, 0, time.FixedZone("X", 3600))
	in := &Ingress{cfg: Config{DefaultTimezone: "UTC"}, now: func() time.Time { return now }, newID: func() string { return "hfresh" }}
	ann := sender{tenant: "acme", user: "ann", roles: []string{"member"}, tz: "Europe/London", ccy: "GBP"}
	bare := sender{tenant: "acme", user: "bob", roles: []string{"owner"}}
	approve := &contracts.Confirm{ProposalID: "p1", Decision: "approve"}
	edit := &contracts.Confirm{ProposalID: "p1", Decision: "edit", Args: json.RawMessage(`{"amount":"3.00"}`)}
	tests := []struct {
		name string
		from sender
		give turnInput
		want contracts.UserTurn
	}{
		{
			name: "a message takes the sender's time zone and currency",
			from: ann,
			give: turnInput{ConversationID: "c1", ClientID: "m1", Text: "hi"},
			want: contracts.UserTurn{TurnID: turnID("acme", "ann", "c1", "m1"), TenantID: "acme", UserID: "ann", Roles: []string{"member"},
				ConversationID: "c1", Text: "hi", Timezone: "Europe/London", Currency: "GBP", SentAt: now.UTC()},
		},
		{
			name: "the input's time zone and currency win",
			from: ann,
			give: turnInput{ConversationID: "c1", ClientID: "m1", Text: "hi", Timezone: "Asia/Tokyo", Currency: "JPY"},
			want: contracts.UserTurn{TurnID: turnID("acme", "ann", "c1", "m1"), TenantID: "acme", UserID: "ann", Roles: []string{"member"},
				ConversationID: "c1", Text: "hi", Timezone: "Asia/Tokyo", Currency: "JPY", SentAt: now.UTC()},
		},
		{
			name: "without either, the configured time zone and no currency",
			from: bare,
			give: turnInput{ConversationID: "c1", ClientID: "m1", Text: "hi"},
			want: contracts.UserTurn{TurnID: turnID("acme", "bob", "c1", "m1"), TenantID: "acme", UserID: "bob", Roles: []string{"owner"},
				ConversationID: "c1", Text: "hi", Timezone: "UTC", SentAt: now.UTC()},
		},
		{
			name: "a message without a client id gets a fresh one",
			from: bare,
			give: turnInput{ConversationID: "c1", Text: "hi"},
			want: contracts.UserTurn{TurnID: turnID("acme", "bob", "c1", "hfresh"), TenantID: "acme", UserID: "bob", Roles: []string{"owner"},
				ConversationID: "c1", Text: "hi", Timezone: "UTC", SentAt: now.UTC()},
		},
		{
			name: "a decision without a client id is identified by itself",
			from: ann,
			give: turnInput{ConversationID: "c1", Confirm: approve},
			want: contracts.UserTurn{TurnID: turnID("acme", "ann", "c1", "confirm-p1-approve"), TenantID: "acme", UserID: "ann", Roles: []string{"member"},
				ConversationID: "c1", Confirm: approve, Timezone: "Europe/London", Currency: "GBP", SentAt: now.UTC()},
		},
		{
			name: "a decision with a client id keeps it",
			from: ann,
			give: turnInput{ConversationID: "c1", ClientID: "d7", Confirm: edit},
			want: contracts.UserTurn{TurnID: turnID("acme", "ann", "c1", "d7"), TenantID: "acme", UserID: "ann", Roles: []string{"member"},
				ConversationID: "c1", Confirm: edit, Timezone: "Europe/London", Currency: "GBP", SentAt: now.UTC()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := in.newTurn(tt.from, tt.give)
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("newTurn (-got +want):\n%s", diff)
			}
			if err := contracts.Validate(&got); err != nil {
				t.Errorf("the turn is invalid: %v", err)
			}
		})
	}
}

// An id-less edit is one turn per set of arguments: the same arguments,
// however spaced and ordered, are the same turn; other arguments, another.
func TestIdlessEditsAreKeyedByTheirArguments(t *testing.T) {
	in := &Ingress{now: time.Now, newID: func() string { return "hfresh" }}
	ann := sender{tenant: "acme", user: "ann", roles: []string{"member"}}
	turnOf := func(decision, args string) string {
		c := &contracts.Confirm{ProposalID: "p1", Decision: decision}
		if args != "" {
			c.Args = json.RawMessage(args)
		}
		return in.newTurn(ann, turnInput{ConversationID: "c1", Confirm: c}).TurnID
	}
	first := turnOf("edit", `{"amount":"3.00","date":"2026-11-21"}`)
	tests := []struct {
		name     string
		decision string
		args     string
		same     bool
	}{
		{"the same edit", "edit", `{"amount":"3.00","date":"2026-11-21"}`, true},
		{"the same edit, spaced and ordered otherwise", "edit", `{ "date":"2026-11-21",  "amount":"3.00" }`, true},
		{"another date", "edit", `{"amount":"3.00","date":"2026-11-22"}`, false},
		{"a bad date", "edit", `{"amount":"3.00","date":"2026-13-45"}`, false},
		{"a number written otherwise", "edit", `{"amount":3.0,"date":"2026-11-21"}`, false},
		{"an approve", "approve", ``, false},
	}
	for _, tt := range tests {
		if got := turnOf(tt.decision, tt.args) == first; got != tt.same {
			t.Errorf("%s: same turn as the first edit = %v, want %v", tt.name, got, tt.same)
		}
	}
	if turnOf("edit", `not json`) == turnOf("edit", `not json either`) {
		t.Error("two edits that are not JSON are one turn")
	}
}

// An approve_all without a client id is identified by its ids, in any
// order: a double click is one decision, another set of ids another.
func TestApproveAllTurnIsItsIDs(t *testing.T) {
	in := &Ingress{now: time.Now, newID: func() string { return "hfresh" }}
	ann := sender{tenant: "acme", user: "ann", roles: []string{"member"}}
	all := func(ids ...string) string {
		return in.newTurn(ann, turnInput{ConversationID: "c1", Confirm: &contracts.Confirm{Decision: contracts.DecisionApproveAll, ProposalIDs: ids}}).TurnID
	}
	if a, b := all("p1", "p2", "p3"), all("p3", "p1", "p2"); a != b {
		t.Errorf("the same ids in another order made turns %s and %s", a, b)
	}
	if a, b := all("p1", "p2"), all("p1", "p2", "p3"); a == b {
		t.Errorf("two sets of ids made one turn %s", a)
	}
}
