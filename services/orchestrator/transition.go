package orchestrator

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// EventKind names what happened to a conversation.
type EventKind string

// Event kinds.
const (
	EvTurn       EventKind = "turn"        // a UserTurn: text or confirm
	EvToolResult EventKind = "tool_result" // a ToolResult for an open call
	EvDecision   EventKind = "decision"    // the model decided (or failed)
	EvTimeout    EventKind = "timeout"     // the turn's wall-clock budget ran out
	// EvSweep says time passed: proposals due are warned of or expired.
	EvSweep EventKind = "sweep"
)

// Event is one input to Transition.
type Event struct {
	Kind     EventKind
	Turn     *contracts.UserTurn
	Result   *ToolResult
	Decision *Decision
	// ModelErr says the model could not be asked (after its own retries).
	ModelErr string
	// ModelInvalid says the model answered with output that is not a
	// decision (bad JSON, a cut-off stream, a refusal); it takes the one
	// corrective retry like any other invalid output.
	ModelInvalid string
	// ModelCall names the call an EvDecision answers; the handler drops a
	// decision for a call the conversation no longer waits for.
	ModelCall string
	// Streamed says the model already streamed the answer's tokens.
	Streamed bool
}

// Env is what a transition may know about the world besides the state.
type Env struct {
	TenantID        string
	ConversationID  string
	Now             time.Time
	DefaultCurrency string
	// DefaultTimezone is the user's time zone for a turn that names none.
	DefaultTimezone string
	// DefaultLocale is the user's language setting, for a turn whose
	// client names none.
	DefaultLocale string
	// ProposalTTL is how long a proposal waits for a yes; zero is
	// ProposalTTL (24 hours).
	ProposalTTL time.Duration
	// NeedsConfirm is the server's policy: true for every tool whose calls
	// wait for a yes. The model has no say in it.
	NeedsConfirm func(tool string) bool
}

// Output kinds.
const (
	ToAgent  = "agent"  // an event for the client, on AGENT
	ToTool   = "tool"   // a ToolRequest, on TOOLS
	ToSocket = "socket" // tool progress: live to the user's sockets, never stored
)

// Output is one message a transition emits. ID is derived from the state
// and the input, so replaying the same input on the same state gives the
// same ids.
type Output struct {
	ID      string
	To      string
	Type    string
	Tool    string // for ToTool
	Payload any
}

// ProposalChange is a status change of a stored proposal.
type ProposalChange struct {
	ID, From, To string
}

// Effects are what the handler must do after a transition.
type Effects struct {
	Outputs      []Output
	NewProposals []PendingProposal // to store, status pending (or approved when Approved)
	Approved     []string          // ids among NewProposals stored already approved (edits)
	Changes      []ProposalChange
	// NeedModel asks the handler to call the model with PromptFor and feed
	// the decision back as an EvDecision.
	NeedModel bool
	// Stream is answer text the handler may stream as tokens first.
	Stream string
	// EndedSteps holds, for each turn this transition ended, the tool
	// steps it used (for metrics).
	EndedSteps []int
	// Rejected says why the model's output was refused (for the log,
	// never shown); RetryGranted is true when it got its one corrective
	// retry, false when the turn ended instead.
	Rejected     string
	RetryGranted bool
}

func (e *Effects) add(o Effects) {
	e.Outputs = append(e.Outputs, o.Outputs...)
	e.NewProposals = append(e.NewProposals, o.NewProposals...)
	e.Approved = append(e.Approved, o.Approved...)
	e.Changes = append(e.Changes, o.Changes...)
	e.NeedModel = o.NeedModel
	e.EndedSteps = append(e.EndedSteps, o.EndedSteps...)
	if o.Stream != "" {
		e.Stream = o.Stream
	}
}

// Transition applies one event to a conversation. It is pure: no I/O, time
// comes from env, ids are derived from the inputs. The caller stores the
// new state with the outputs (outbox) before publishing anything.
func Transition(s State, ev Event, env Env) (_ State, eff Effects) {
	s = s.clone()
	if before := s.Turn; before != nil {
		defer func() {
			if s.Turn == nil || s.Turn.TurnID != before.TurnID {
				eff.EndedSteps = append(eff.EndedSteps, before.StepsUsed)
			}
		}()
	}
	switch ev.Kind {
	case EvTurn:
		s, eff = onTurn(s, *ev.Turn, env)
	case EvToolResult:
		s, eff = onToolResult(s, *ev.Result, env)
	case EvDecision:
		s, eff = onDecision(s, ev, env)
	case EvTimeout:
		if s.Turn != nil && env.Now.Sub(s.Turn.StartedAt) > TurnBudget {
			s, eff = failTurn(s, env, contracts.CodeTimeout, say(s, "That took too long, so I stopped. Please try again.", "Cela a pris trop de temps, je me suis arrêté. Veuillez réessayer."))
		}
	case EvSweep:
		s, eff = sweepProposals(s, env)
	}
	// A turn that waited behind running tools goes next.
	for s.Turn == nil && len(s.Queue) > 0 && !eff.NeedModel {
		next := s.Queue[0]
		s.Queue = s.Queue[1:]
		var more Effects
		s, more = startTurn(s, next, env)
		eff.add(more)
	}
	return s, eff
}

func onTurn(s State, t contracts.UserTurn, env Env) (State, Effects) {
	if s.hasApplied(t.TurnID) {
		return s, Effects{}
	}
	s.UserID, s.Roles, s.Timezone = t.UserID, slices.Clone(t.Roles), t.Timezone
	if s.Timezone == "" {
		s.Timezone = env.DefaultTimezone
	}
	// The client's locale, else the person's language setting, else
	// what the conversation spoke so far.
	s.Locale = cmp.Or(t.Locale, env.DefaultLocale, s.Locale)
	var stale Effects
	if s.Turn != nil && env.Now.Sub(s.Turn.StartedAt) > TurnBudget {
		// The running turn outlived its budget (a tool never answered):
		// end it so that it cannot hold this conversation forever.
		s, stale = failTurn(s, env, contracts.CodeTimeout, say(s, "That took too long, so I stopped. Please try again.", "Cela a pris trop de temps, je me suis arrêté. Veuillez réessayer."))
	}
	if s.Turn != nil {
		// Tools are running: this turn waits and is applied after.
		if len(s.Queue) >= maxQueued {
			s = s.withApplied(t.TurnID, env.Now)
			return s, Effects{Outputs: []Output{turnError(t.TurnID, "busy", contracts.CodeLimit, say(s, "I'm still working on your earlier messages; please wait a moment.", "Je traite encore vos messages précédents ; patientez un instant."))}}
		}
		s.Queue = append(s.Queue, t)
		return s.withApplied(t.TurnID, env.Now), Effects{}
	}
	s = s.withApplied(t.TurnID, env.Now)
	s, eff := startTurn(s, t, env)
	stale.add(eff)
	return s, stale
}

// startTurn begins an applied turn: a decision on a proposal, or text for
// the model.
func startTurn(s State, t contracts.UserTurn, env Env) (State, Effects) {
	s, eff := expireProposals(s, env)
	reoffer := s.Reoffer
	s.Reoffer = nil // an offer to propose again holds for the next turn only
	if t.Confirm != nil {
		var more Effects
		if t.Confirm.Decision == contracts.DecisionApproveAll {
			s, more = onApproveAll(s, t, t.Confirm.ProposalIDs, env)
		} else {
			s, more = onConfirm(s, t, *t.Confirm, env)
		}
		eff.add(more)
		return s, eff
	}
	if s2, more, ok := retryTimedOut(s, t, env); ok {
		eff.add(more)
		return s2, eff
	}
	s.Retry = nil // "try again" holds for the turn right after a timeout
	d := yesNo(t.Text)
	if t.Upload != nil {
		d = ""
	}
	switch {
	case d != "" && len(s.Proposals) > 0:
		// "yes" or "no" typed while a proposal waits is a decision on the
		// newest one.
		p := s.Proposals[len(s.Proposals)-1]
		s, more := onConfirm(s, t, contracts.Confirm{ProposalID: p.ID, Decision: d}, env)
		eff.add(more)
		return s, eff
	case d != "" && reoffer != nil:
		s, more := answerReoffer(s, t, *reoffer, d == contracts.DecisionApprove, env)
		eff.add(more)
		return s, eff
	case d == contracts.DecisionApprove && justExpired(s) != nil:
		// A yes to a proposal that expired since it was made.
		s, more := offerAgain(s, t, *justExpired(s), env)
		eff.add(more)
		return s, eff
	}
	text := t.Text
	if t.Upload != nil {
		// The file is part of what the person said: the model reads its
		// note, and the history keeps it.
		text = strings.TrimSpace(text + " " + uploadNote(t.Upload))
	}
	s = s.withHistory(Entry{Role: "user", Text: text, TurnID: t.TurnID, At: env.Now})
	s.Turn = &Turn{TurnID: t.TurnID, Text: text, Upload: t.Upload, StartedAt: env.Now}
	eff.NeedModel = true
	return s, eff
}

func yesNo(text string) string {
	switch strings.ToLower(strings.Trim(strings.TrimSpace(text), ".!")) {
	case "yes", "y", "yes please", "yep", "ok", "okay", "sure", "go ahead", "do it", "confirm", "approve",
		"oui", "ouais", "d'accord", "vas-y", "ok vas-y", "oui merci", "confirme", "valide":
		return "approve"
	case "no", "n", "nope", "no thanks", "cancel", "don't", "stop", "reject",
		"non", "non merci", "annule", "laisse tomber":
		return "reject"
	}
	return ""
}

func onConfirm(s State, t contracts.UserTurn, c contracts.Confirm, env Env) (State, Effects) {
	i := slices.IndexFunc(s.Proposals, func(p PendingProposal) bool { return p.ID == c.ProposalID })
	if i < 0 {
		if e := expiredProposal(s, c.ProposalID); e != nil {
			if c.Decision == contracts.DecisionReject {
				return s, Effects{Outputs: []Output{turnError(t.TurnID, "confirm", contracts.CodeProposalExpired,
					say(s, "That proposal had already expired, so nothing was changed.", "Cette proposition avait déjà expiré : rien n'a été modifié."))}}
			}
			return offerAgain(s, t, *e, env)
		}
		return s, Effects{Outputs: []Output{turnError(t.TurnID, "confirm", contracts.CodeProposalInvalid,
			say(s, "That proposal is unknown or already decided, so nothing was changed.", "Cette proposition est inconnue ou déjà décidée : rien n'a été modifié."))}}
	}
	p := s.Proposals[i]
	s.Proposals = slices.Delete(slices.Clone(s.Proposals), i, i+1)
	turn := &Turn{TurnID: t.TurnID, Text: p.Text, StartedAt: env.Now}
	if p.Plan != nil && c.Decision != "reject" {
		rest := *p.Plan // the plan that reached this change goes on after it
		turn.Plan = &rest
	}
	var eff Effects
	switch c.Decision {
	case "approve":
		s = s.withHistory(Entry{Role: "user", Text: "Yes: " + p.Summary, TurnID: t.TurnID, At: env.Now})
		eff.Changes = append(eff.Changes, ProposalChange{ID: p.ID, From: "pending", To: "approved"})
		s.Turn = turn
		s, eff = dispatch(s, env, eff, OpenCall{Tool: p.Tool, Args: p.Args, ProposalID: p.ID, Decision: "approved", SaveAs: p.SaveAs}, 0)
		return s, eff
	case "reject":
		s = s.withHistory(Entry{Role: "user", Text: "No: " + p.Summary, TurnID: t.TurnID, At: env.Now})
		eff.Changes = append(eff.Changes, ProposalChange{ID: p.ID, From: "pending", To: "rejected"})
		turn.Steps = []StepRecord{{Tool: p.Tool, Args: p.Args, Decision: "rejected"}}
		s.Turn = turn
		eff.NeedModel = true
		return s, eff
	}
	// edit: the same tool, never another; new args validated against its schema.
	args, err := canonicalArgs(p.Tool, c.Args, s, env)
	if err != nil {
		s.Proposals = append(s.Proposals, p) // still waiting
		return s, Effects{Outputs: []Output{turnError(t.TurnID, "edit", contracts.CodeInvalidArgs, say(s, "Those changes are not valid (", "Ces modifications ne sont pas valides (")+err.Error()+say(s, "); the proposal still waits.", ") ; la proposition attend toujours."))}}
	}
	rev := p
	rev.ID = deriveID("p", p.ID, "rev", fmt.Sprint(p.Revision+1))
	rev.Revision = p.Revision + 1
	rev.Args = args
	rev.Summary = summarize(p.Tool, args, s, env)
	if r := rowOf(p.Tool).check; r != nil && p.Seen != nil {
		// The lookup still shows what the change touches, unless the edit
		// names another entry.
		if sum, missing := r.seen(args, p.Seen, s, env); missing == "" {
			rev.Summary = sum
		} else {
			rev.Seen = nil
		}
	}
	rev.TurnID = t.TurnID
	s = s.withHistory(Entry{Role: "user", Text: "Yes, with changes: " + rev.Summary, TurnID: t.TurnID, At: env.Now})
	eff.Changes = append(eff.Changes, ProposalChange{ID: p.ID, From: "pending", To: "rejected"})
	eff.NewProposals = append(eff.NewProposals, rev)
	eff.Approved = append(eff.Approved, rev.ID)
	s.Turn = turn
	return dispatch(s, env, eff, OpenCall{Tool: p.Tool, Args: args, ProposalID: rev.ID, Decision: "edited", Edited: args, SaveAs: p.SaveAs}, 0)
}

// dispatch starts one tool call: a ToolRequest and a tool_start event.
func dispatch(s State, env Env, eff Effects, c OpenCall, k int) (State, Effects) {
	t := s.Turn
	c.CallID = deriveID("c", t.TurnID, fmt.Sprint(t.Round), fmt.Sprint(t.StepsUsed), fmt.Sprint(k))
	t.Open = append(t.Open, c)
	t.StepsUsed++
	eff.Outputs = append(eff.Outputs, startOutputs(s, env, c)...)
	return s, eff
}

// endTurn finishes the current turn.
func endTurn(s State) State {
	s.Turn = nil
	return s
}

// failTurn ends the turn with a short TurnError.
func failTurn(s State, env Env, code, msg string) (State, Effects) {
	id := s.Turn.TurnID
	out := turnError(id, fmt.Sprintf("fail-%d", s.Turn.Round), code, msg)
	if te := out.Payload.(contracts.TurnError); s.Turn.RetryAfter > 0 {
		te.RetryAfter = s.Turn.RetryAfter
		out.Payload = te
	}
	s = s.withHistory(Entry{Role: "assistant", Text: msg, TurnID: id, At: env.Now})
	return endTurn(s), Effects{Outputs: []Output{out}}
}

func turnError(turnID, what, code, msg string) Output {
	return Output{ID: deriveID("e", turnID, "error", what), To: ToAgent, Type: contracts.TypeTurnError,
		Payload: contracts.TurnError{TurnID: turnID, Code: code, Message: msg}}
}

// deriveID makes a stable id from its parts: the same parts, the same id.
func deriveID(prefix string, parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return prefix + hex.EncodeToString(sum[:15])
}

// proposalTTL is how long a proposal made in env waits for a yes.
func proposalTTL(env Env) time.Duration {
	if env.ProposalTTL > 0 {
		return env.ProposalTTL
	}
	return ProposalTTL
}

func userLoc(s State) *time.Location {
	if loc, err := contracts.LoadZone(s.Timezone); err == nil && s.Timezone != "" {
		return loc
	}
	return time.UTC
}
