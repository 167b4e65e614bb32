package orchestrator

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Expiry warnings: a proposal is announced as about to expire an hour
// before it does, or, for a wait shorter than ten hours, at nine tenths of
// it, so that a short wait still leaves time to answer.
const (
	warnLead     = time.Hour
	warnFraction = 10 // the lead is at most 1/warnFraction of the wait
)

// ToNotify is an output for the person's inbox, on NOTIFY.
const ToNotify = "notify"

// NotifyExpiring is the Notification kind of a proposal about to expire,
// NotifyExpired of one that has: a page showing it closes its card as
// expired when this arrives, whatever its own clock says.
const (
	NotifyExpiring = "proposal_expiring"
	NotifyExpired  = "proposal_expired"
)

// expiryOf is when a proposal made now expires, and when the person is
// warned that it is about to.
func expiryOf(env Env) (expires, warn time.Time) {
	ttl := proposalTTL(env)
	lead := min(warnLead, ttl/warnFraction)
	expires = env.Now.Add(ttl)
	return expires, expires.Add(-lead)
}

// expireProposals moves proposals past their expiry to Expired, stores
// them as expired, and tells the model in the history: an expiry is its
// own outcome, never a no.
func expireProposals(s State, env Env) (State, Effects) {
	var eff Effects
	kept := s.Proposals[:0:0]
	for _, p := range s.Proposals {
		if !env.Now.After(p.ExpiresAt) {
			kept = append(kept, p)
			continue
		}
		eff.Changes = append(eff.Changes, ProposalChange{ID: p.ID, From: "pending", To: "expired"})
		eff.Outputs = append(eff.Outputs, expiredNotice(s, env, p))
		s.Expired = append(s.Expired, p)
		s = s.withHistory(Entry{Role: "assistant", Text: expiredNote + p.Summary, TurnID: p.TurnID, At: env.Now})
	}
	if n := len(s.Expired); n > maxExpired {
		s.Expired = slices.Clone(s.Expired[n-maxExpired:])
	}
	s.Proposals = kept
	return s, eff
}

// expiredNote starts the history line of a proposal that expired.
const expiredNote = "Expired, nobody approved it in time (nothing was changed): "

// expiredProposal is the remembered expired proposal of id, or nil.
func expiredProposal(s State, id string) *PendingProposal {
	if i := slices.IndexFunc(s.Expired, func(p PendingProposal) bool { return p.ID == id }); i >= 0 {
		return &s.Expired[i]
	}
	return nil
}

// justExpired is the newest expired proposal when nothing was said since
// it expired (a "yes" then is meant for it), else nil.
func justExpired(s State) *PendingProposal {
	if len(s.Expired) == 0 || len(s.History) == 0 {
		return nil
	}
	p := s.Expired[len(s.Expired)-1]
	if s.History[len(s.History)-1].Text != expiredNote+p.Summary {
		return nil
	}
	return &p
}

// offerAgain answers a yes to an expired proposal: it says that it
// expired and nothing changed, and offers to propose it again; a yes to
// that proposes it anew (answerReoffer).
func offerAgain(s State, t contracts.UserTurn, p PendingProposal, env Env) (State, Effects) {
	at := p.ExpiresAt.In(userLoc(s)).Format("2006-01-02 15:04")
	q := say(s, fmt.Sprintf("That proposal expired at %s before it was approved, so nothing was changed: %s Shall I propose it again?", at, p.Summary),
		fmt.Sprintf("Cette proposition a expiré le %s sans avoir été approuvée : rien n'a été modifié (%s). Voulez-vous que je la propose à nouveau ?",
			FormatDateIn(s.Locale, at[:10])+at[10:], p.Summary))
	s = s.withHistory(Entry{Role: "user", Text: "Yes: " + p.Summary, TurnID: t.TurnID, At: env.Now},
		Entry{Role: "assistant", Text: q, TurnID: t.TurnID, At: env.Now, Open: true})
	s.Reoffer = &p
	out := Output{ID: deriveID("e", t.TurnID, "expired"), To: ToAgent, Type: contracts.TypeClarify,
		Payload: contracts.Clarify{TurnID: t.TurnID, Question: q}}
	return s, Effects{Outputs: []Output{out}}
}

// answerReoffer takes the person's answer to "shall I propose it again?":
// yes proposes the expired change anew, with exactly its args and a new
// id and expiry; no leaves it.
func answerReoffer(s State, t contracts.UserTurn, old PendingProposal, yes bool, env Env) (State, Effects) {
	if !yes {
		msg := say(s, "OK, I'll leave it.", "D'accord, je laisse tomber.")
		s = s.withHistory(Entry{Role: "user", Text: t.Text, TurnID: t.TurnID, At: env.Now},
			Entry{Role: "assistant", Text: msg, TurnID: t.TurnID, At: env.Now})
		return s, Effects{Outputs: []Output{{ID: deriveID("e", t.TurnID, "answer", "0"), To: ToAgent, Type: contracts.TypeAnswer,
			Payload: contracts.Answer{TurnID: t.TurnID, Content: msg}}}}
	}
	p := old
	p.ID = deriveID("p", t.TurnID, "again", old.ID)
	p.TurnID, p.Revision, p.Warned = t.TurnID, 1, false
	p.ExpiresAt, p.WarnAt = expiryOf(env)
	p.Plan, p.SaveAs = nil, "" // the turn that planned it is long over
	s = s.withHistory(Entry{Role: "user", Text: t.Text, TurnID: t.TurnID, At: env.Now})
	return propose(s, env, Effects{}, t.TurnID, []PendingProposal{p})
}

// propose stores proposals and shows them, replacing any still waiting
// from before: the person moved on, and one yes must not run a stale
// change. The replaced ones are superseded, not expired.
func propose(s State, env Env, eff Effects, turnID string, proposals []PendingProposal) (State, Effects) {
	for _, old := range s.Proposals {
		eff.Changes = append(eff.Changes, ProposalChange{ID: old.ID, From: "pending", To: "superseded"})
	}
	s.Proposals = proposals
	eff.NewProposals = append(eff.NewProposals, proposals...)
	for _, p := range proposals {
		eff.Outputs = append(eff.Outputs, Output{ID: deriveID("e", p.ID, "proposal"), To: ToAgent, Type: contracts.TypeProposal,
			Payload: contracts.Proposal{ProposalID: p.ID, TurnID: p.TurnID, Tool: p.Tool, Args: p.Args, Summary: p.Summary, ExpiresAt: p.ExpiresAt}})
		s = s.withHistory(Entry{Role: "assistant", Text: "Proposed: " + p.Summary, TurnID: turnID, At: env.Now, Open: true})
	}
	return s, eff
}

// sweepProposals is what the passing of time does to the proposals that
// wait: those past their expiry expire, and the person is told once,
// through their inbox, of each about to.
func sweepProposals(s State, env Env) (State, Effects) {
	s, eff := expireProposals(s, env)
	for i := range s.Proposals {
		p := &s.Proposals[i]
		if p.Warned || p.WarnAt.IsZero() || env.Now.Before(p.WarnAt) {
			continue
		}
		p.Warned = true
		eff.Outputs = append(eff.Outputs, expiringNotice(s, env, *p))
	}
	return s, eff
}

// expiringNotice is the inbox entry that says p is about to expire.
func expiringNotice(s State, env Env, p PendingProposal) Output {
	at := p.ExpiresAt.In(userLoc(s)).Format("2006-01-02 15:04 MST")
	return proposalNotice(env, p, "pexp-", NotifyExpiring, "expiring",
		say(s, "A change waits for your yes until "+at, "Une modification attend votre accord jusqu'au "+FormatDateIn(s.Locale, at[:10])+at[10:]))
}

// expiredNotice is the inbox entry, and the live event on an open page,
// that says p expired unapproved and nothing was changed.
func expiredNotice(s State, env Env, p PendingProposal) Output {
	return proposalNotice(env, p, "pgone-", NotifyExpired, "expired",
		say(s, "A change expired before your yes; nothing was changed", "Une modification a expiré sans votre accord ; rien n'a été modifié"))
}

// proposalNotice is a notification about p; its ids derive from the
// proposal's, so a sweep repeated, or its message sent again, makes the
// same entry.
func proposalNotice(env Env, p PendingProposal, idPrefix, kind, what, title string) Output {
	data, _ := json.Marshal(struct {
		ProposalID     string    `json:"proposal_id"`
		ConversationID string    `json:"conversation_id"`
		ExpiresAt      time.Time `json:"expires_at"`
	}{p.ID, env.ConversationID, p.ExpiresAt.UTC()})
	n := contracts.Notification{ID: idPrefix + p.ID, Kind: kind, Title: title, Body: p.Summary, Data: data, CreatedAt: env.Now.UTC()}
	return Output{ID: deriveID("n", p.ID, what), To: ToNotify, Type: contracts.TypeNotification, Payload: n}
}

// dueAt is when the sweep must next look at the conversation's proposals:
// the earliest warning not yet given or expiry (zero: none waits).
func dueAt(s State) time.Time {
	var due time.Time
	for _, p := range s.Proposals {
		at := p.ExpiresAt
		if !p.Warned && !p.WarnAt.IsZero() {
			at = p.WarnAt
		}
		if due.IsZero() || at.Before(due) {
			due = at
		}
	}
	return due
}

// say is en, or fr for a person who speaks French.
func say(s State, en, fr string) string { return langOf(s.Locale).say(en, fr) }
