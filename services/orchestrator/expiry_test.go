package orchestrator

import (
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

func sweep() Event { return Event{Kind: EvSweep} }

func notices(eff Effects) []contracts.Notification {
	var out []contracts.Notification
	for _, o := range eff.Outputs {
		if n, ok := o.Payload.(contracts.Notification); ok && o.To == ToNotify {
			out = append(out, n)
		}
	}
	return out
}

// The person is told once, an hour before, that a proposal is about to
// expire; a proposal nobody approved then expires, which the history
// (the model's view) calls expired, never declined.
func TestProposalWarnedOnceThenExpires(t *testing.T) {
	s, p := proposeAdd(t, testEnv(t0))
	if due := deadlineOf(s, time.Minute); due == nil || !due.Equal(t0.Add(23*time.Hour)) {
		t.Fatalf("the sweep looks at the conversation at %v, want an hour before the expiry", due)
	}
	if _, eff := step(t, s, sweep(), testEnv(t0.Add(22*time.Hour))); len(eff.Outputs) != 0 {
		t.Fatalf("warned too early: %q", types(eff))
	}
	s, eff := step(t, s, sweep(), testEnv(t0.Add(23*time.Hour+time.Second)))
	ns := notices(eff)
	if len(ns) != 1 || ns[0].Kind != NotifyExpiring || ns[0].ID != "pexp-"+p.ProposalID || ns[0].Body != p.Summary ||
		!strings.Contains(string(ns[0].Data), p.ProposalID) || !strings.Contains(ns[0].Title, "until") {
		t.Fatalf("warning = %+v", ns)
	}
	if err := contracts.Validate(ns[0]); err != nil {
		t.Fatalf("warning is not a valid notification: %v", err)
	}
	again, eff := step(t, s, sweep(), testEnv(t0.Add(23*time.Hour+time.Minute)))
	if len(eff.Outputs) != 0 {
		t.Fatalf("warned twice: %q", types(eff))
	}
	if due := deadlineOf(again, time.Minute); due == nil || !due.Equal(p.ExpiresAt) {
		t.Fatalf("after the warning the sweep looks at %v, want the expiry %v", due, p.ExpiresAt)
	}
	s, eff = step(t, again, sweep(), testEnv(t0.Add(24*time.Hour+time.Second)))
	if len(eff.Changes) != 1 || eff.Changes[0].To != "expired" || len(s.Proposals) != 0 || deadlineOf(s, time.Minute) != nil {
		t.Fatalf("expiry = %+v, waiting %d", eff.Changes, len(s.Proposals))
	}
	// An open page learns of it at once, by the notice its card closes on.
	if ns := notices(eff); len(ns) != 1 || ns[0].Kind != NotifyExpired || ns[0].ID != "pgone-"+p.ProposalID || ns[0].Body != p.Summary ||
		!strings.Contains(string(ns[0].Data), `"proposal_id":"`+p.ProposalID+`"`) || !strings.Contains(ns[0].Title, "nothing was changed") {
		t.Fatalf("expiry notice = %+v", ns)
	} else if err := contracts.Validate(ns[0]); err != nil {
		t.Fatalf("expiry notice is not a valid notification: %v", err)
	}
	last := s.History[len(s.History)-1].Text
	if !strings.Contains(last, "Expired") || strings.Contains(strings.ToLower(last), "declin") || strings.HasPrefix(last, "No:") {
		t.Fatalf("history says %q, want expired", last)
	}
}

// A short wait is warned of at nine tenths of it.
func TestShortProposalWarnedAtNineTenths(t *testing.T) {
	env := testEnv(t0)
	env.ProposalTTL = 10 * time.Minute
	s, _ := step(t, State{}, textTurn("t1", "electricity bill £200"), env)
	s, _ = step(t, s, calls(addCall("electricity bill", "200")), env)
	if got := s.Proposals[0].WarnAt; !got.Equal(t0.Add(9 * time.Minute)) {
		t.Fatalf("warn at %v, want %v", got, t0.Add(9*time.Minute))
	}
}

// A yes to a proposal that expired says so and offers it again; a yes
// to that proposes exactly the same change under a new id, which waits a
// full day again.
func TestYesToAnExpiredProposalOffersItAgain(t *testing.T) {
	s, p := proposeAdd(t, testEnv(t0))
	late := testEnv(t0.Add(25 * time.Hour))
	s, eff := step(t, s, textTurn("t2", "yes"), late)
	q := only[contracts.Clarify](t, eff, contracts.TypeClarify)
	if !strings.Contains(q.Question, "expired") || !strings.Contains(q.Question, "propose it again") || strings.Contains(types(eff), contracts.TypeToolRequest) {
		t.Fatalf("yes after expiry = %q (%q)", q.Question, types(eff))
	}
	s, eff = step(t, s, textTurn("t3", "yes"), late)
	again := only[contracts.Proposal](t, eff, contracts.TypeProposal)
	if again.ProposalID == p.ProposalID || string(again.Args) != string(p.Args) || again.Tool != p.Tool || !again.ExpiresAt.Equal(late.Now.Add(ProposalTTL)) {
		t.Fatalf("proposed again = %+v, want %s with a new id", again, p.Args)
	}
	if len(s.Proposals) != 1 || len(eff.NewProposals) != 1 {
		t.Fatalf("the new proposal is not waiting: %+v", s.Proposals)
	}
	// A no to the offer leaves it.
	s2, p2 := proposeAdd(t, testEnv(t0))
	s2, _ = step(t, s2, confirmTurn("t2", p2.ProposalID, "approve", ""), late)
	_, eff = step(t, s2, textTurn("t3", "no"), late)
	if a := only[contracts.Answer](t, eff, contracts.TypeAnswer); len(eff.NewProposals) != 0 || !strings.Contains(a.Content, "leave it") {
		t.Fatalf("no to the offer = %q", types(eff))
	}
}

// A new proposal replaces the one still waiting: that one is superseded,
// not expired.
func TestReplacedProposalIsSuperseded(t *testing.T) {
	env := testEnv(t0)
	s, p := proposeAdd(t, env)
	s, _ = step(t, s, textTurn("t2", "actually, coffee £3"), env)
	_, eff := step(t, s, calls(addCall("coffee", "3")), env)
	if len(eff.Changes) != 1 || eff.Changes[0] != (ProposalChange{ID: p.ProposalID, From: "pending", To: "superseded"}) {
		t.Fatalf("changes = %+v, want the old proposal superseded", eff.Changes)
	}
}

// The person's language setting applies to a turn whose client names no
// locale; a client's locale wins.
func TestLanguageSettingIsTheDefaultLocale(t *testing.T) {
	env := testEnv(t0)
	env.DefaultLocale = "fr"
	s, _ := step(t, State{}, textTurn("t1", "hello"), env)
	if s.Locale != "fr" {
		t.Fatalf("locale = %q, want the setting fr", s.Locale)
	}
	ev := textTurn("t2", "hello")
	ev.Turn.Locale = "en-GB"
	s = endTurn(s)
	s, _ = step(t, s, ev, env)
	if s.Locale != "en-GB" {
		t.Fatalf("locale = %q, want the client's en-GB", s.Locale)
	}
}
