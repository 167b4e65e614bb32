package orchestrator

import (
	"regexp"
	"strconv"

	"github.com/purser-ai/purser/pkg/contracts"
)

// retryRe is a person asking to try once more what just timed out.
var retryRe = regexp.MustCompile(`(?i)^\s*(?:please\s+)?(?:try (?:it |that )?again|retry|again|one more time|r[ée]essa(?:ie|yez)|recommence|encore une fois)\s*(?:please|s'il te pla[iî]t|s'il vous pla[iî]t)?\s*[.!]?\s*$`)

// retryTimedOut runs again the call that last timed out, when the person
// asks to: a read runs at once, a change is proposed anew (its yes was
// for a run that never happened, and time has passed). ok is false when
// there is nothing to retry.
func retryTimedOut(s State, t contracts.UserTurn, env Env) (State, Effects, bool) {
	c := s.Retry
	if c == nil || t.Upload != nil || !retryRe.MatchString(t.Text) {
		return s, Effects{}, false
	}
	s.Retry = nil
	s = s.withHistory(Entry{Role: "user", Text: t.Text, TurnID: t.TurnID, At: env.Now})
	s.Turn = &Turn{TurnID: t.TurnID, Text: t.Text, StartedAt: env.Now}
	if !env.NeedsConfirm(c.Tool) {
		s, eff := dispatch(s, env, Effects{}, OpenCall{Tool: c.Tool, Args: c.Args}, 0)
		return s, eff, true
	}
	if !canWrite(s.Roles) {
		s, eff := failTurn(s, env, contracts.CodeForbidden, say(s, "You have read-only access, so I can't change anything.", "Votre accès est en lecture seule : je ne peux rien modifier."))
		return s, eff, true
	}
	p := PendingProposal{ID: deriveID("p", t.TurnID, "retry", strconv.Itoa(0)), TurnID: t.TurnID, Text: t.Text,
		Tool: c.Tool, Args: c.Args, Summary: summarize(c.Tool, c.Args, s, env), Revision: 1}
	p.ExpiresAt, p.WarnAt = expiryOf(env)
	s, eff := propose(s, env, Effects{}, t.TurnID, []PendingProposal{p})
	return endTurn(s), eff, true
}
