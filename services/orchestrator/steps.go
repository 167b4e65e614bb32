package orchestrator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

func onToolResult(s State, r ToolResult, env Env) (State, Effects) {
	t := s.Turn
	if t == nil {
		return s, Effects{} // a late or repeated result: nothing waits for it
	}
	i := slices.IndexFunc(t.Open, func(c OpenCall) bool { return c.CallID == r.CallID })
	if i < 0 {
		return s, Effects{}
	}
	c := t.Open[i]
	t.Open = slices.Delete(t.Open, i, i+1)
	rec := StepRecord{CallID: c.CallID, Tool: c.Tool, Args: c.Args, OK: r.OK, Data: r.Data, Decision: c.Decision, Edited: c.Edited, ProposalID: c.ProposalID}
	if r.Error != nil {
		rec.Error, rec.Code, rec.RetryAfter = r.Error.Message, r.Error.Code, r.Error.RetryAfter
		if r.Error.RetryAfter > 0 {
			t.RetryAfter = r.Error.RetryAfter
		}
		if r.Error.Code == contracts.CodeTimedOut && !c.Check {
			s.Retry = &Call{Tool: c.Tool, Args: c.Args}
		}
	}
	t.Steps = append(t.Steps, rec)
	ok := r.OK
	failure := rec.Error
	if ok && !c.Check {
		s.Memory = remember(s.Memory, c, r.Data)
	}
	var eff Effects
	status := "succeeded"
	if !r.OK && r.Error != nil {
		status = "failed"
	}
	eff.Outputs = append(eff.Outputs, progress(c, status, DescribeStepIn(s.Locale, rec)))
	if len(t.Open) > 0 {
		return s, eff // wait for the rest
	}
	if env.Now.Sub(t.StartedAt) > TurnBudget {
		s, more := failTurn(s, env, contracts.CodeTimeout, say(s, "That took too long, so I stopped. Please try again.", "Cela a pris trop de temps, je me suis arrêté. Veuillez réessayer."))
		eff.add(more)
		return s, eff
	}
	if chk := t.Checking; chk != nil {
		t.Checking = nil
		return checked(s, env, eff, *chk)
	}
	if !ok && t.Batch == nil {
		t.Plan = nil
		return replan(s, env, eff, failure)
	}
	if t.Batch != nil {
		return finishBatch(s, env, eff)
	}
	if t.Plan != nil {
		return advancePlan(s, env, eff)
	}
	if f := rowOf(c.Tool).followUp; f != nil && c.Decision != "" {
		// A change the person approved offers the next one itself
		// (recategorize: the rule for next time).
		if next, ok := f(r.Data); ok {
			s, more := onCalls(s, env, []Call{next})
			eff.add(more)
			return s, eff
		}
	}
	eff.NeedModel = true
	return s, eff
}

// replan gives the model one more go after a failed step, with the reason;
// a second failure ends the turn.
func replan(s State, env Env, eff Effects, reason string) (State, Effects) {
	t := s.Turn
	if t.Replanned {
		s, more := failTurn(s, env, contracts.CodeLimit, say(s, "I couldn't finish that: ", "Je n'ai pas pu terminer : ")+reason)
		eff.add(more)
		return s, eff
	}
	t.Replanned = true
	t.Failure = reason
	eff.NeedModel = true
	return s, eff
}

func onDecision(s State, ev Event, env Env) (State, Effects) {
	t := s.Turn
	if t == nil {
		return s, Effects{}
	}
	t.Round++
	// The model has seen the correction or failure reason by now.
	t.Correction, t.Failure = "", ""
	if ev.ModelErr != "" {
		return failTurn(s, env, contracts.CodeModel, say(s, "The assistant is unavailable right now; please try again in a moment.", "L'assistant est indisponible pour le moment ; veuillez réessayer dans un instant."))
	}
	if ev.ModelInvalid != "" || ev.Decision == nil {
		return invalidOutput(s, env, cmp.Or(ev.ModelInvalid, "no decision"))
	}
	d := *ev.Decision
	switch d.Kind {
	case DecisionAnswer:
		content := strings.TrimSpace(d.Content)
		if content == "" {
			if len(t.Steps) == 0 {
				return invalidOutput(s, env, "the answer was empty")
			}
			content = fallbackAnswer(s.Locale, t.Steps)
		}
		return finishAnswer(s, env, content)
	case DecisionClarify:
		q := strings.TrimSpace(d.Question)
		if q == "" {
			return invalidOutput(s, env, "the clarifying question was empty")
		}
		out := Output{ID: deriveID("e", t.TurnID, "clarify", strconv.Itoa(t.Round)), To: ToAgent, Type: contracts.TypeClarify,
			Payload: contracts.Clarify{TurnID: t.TurnID, Question: q}}
		s = s.withHistory(Entry{Role: "assistant", Text: q, TurnID: t.TurnID, At: env.Now, Open: true})
		return endTurn(s), Effects{Outputs: []Output{out}}
	case DecisionToolCalls:
		return onCalls(s, env, d.Calls)
	case DecisionPlan:
		if d.Plan == nil || len(d.Plan.Steps) == 0 {
			return invalidOutput(s, env, "the plan had no steps")
		}
		for _, st := range d.Plan.Steps {
			if _, ok := lookupTool(st.Tool); !ok {
				return invalidOutput(s, env, fmt.Sprintf("unknown tool %q in the plan", st.Tool))
			}
		}
		if t.StepsUsed+len(d.Plan.Steps) > MaxSteps {
			return failTurn(s, env, contracts.CodeLimit, fmt.Sprintf(say(s, "That needs more than %d steps; please ask for less at once.", "Cela demande plus de %d étapes ; demandez-en moins à la fois."), MaxSteps))
		}
		t.Plan = &PlanState{Steps: d.Plan.Steps, StopWhen: d.Plan.StopWhen}
		return advancePlan(s, env, Effects{})
	}
	return invalidOutput(s, env, fmt.Sprintf("unknown decision %q", d.Kind))
}

// invalidOutput gives the model exactly one corrective retry.
func invalidOutput(s State, env Env, what string) (State, Effects) {
	t := s.Turn
	if t.Corrected {
		s, eff := failTurn(s, env, contracts.CodeModel, say(s, "I couldn't work out how to do that. Could you rephrase it?", "Je n'ai pas compris comment faire. Pouvez-vous reformuler ?"))
		eff.Rejected = what
		return s, eff
	}
	t.Corrected = true
	t.Correction = "Your last reply was invalid: " + what + ". Reply again following the rules."
	return s, Effects{NeedModel: true, Rejected: what, RetryGranted: true}
}

func onCalls(s State, env Env, calls []Call) (State, Effects) {
	t := s.Turn
	if len(calls) == 0 {
		return invalidOutput(s, env, "no tool calls")
	}
	// The built-in clarify tool is a question, not a call.
	if len(calls) == 1 && isClarify(calls[0].Tool) {
		q, err := clarifyQuestion(calls[0].Args)
		if err != nil {
			return invalidOutput(s, env, "ask_clarification: "+err.Error())
		}
		return onDecision(s, Event{Kind: EvDecision, Decision: &Decision{Kind: DecisionClarify, Question: q}}, env)
	}
	canon := make([]json.RawMessage, len(calls))
	for i, c := range calls {
		if isClarify(c.Tool) {
			return invalidOutput(s, env, "ask_clarification must be the only call")
		}
		args, err := canonicalArgs(c.Tool, c.Args, s, env)
		if err != nil {
			return invalidOutput(s, env, fmt.Sprintf("%s: %v", c.Tool, err))
		}
		canon[i] = args
	}
	// A change that names something is proposed only once a read has
	// looked it up; a person who may not write is refused at once instead.
	calls = slices.Clone(calls)
	var lookups []int
	for i, c := range calls {
		calls[i].Args = canon[i]
		if rowOf(c.Tool).check != nil && env.NeedsConfirm(c.Tool) && canWrite(s.Roles) {
			lookups = append(lookups, i)
		}
	}
	if t.StepsUsed+len(calls)+len(lookups) > MaxSteps {
		return failTurn(s, env, contracts.CodeLimit, fmt.Sprintf(say(s, "That needs more than %d steps; please ask for less at once.", "Cela demande plus de %d étapes ; demandez-en moins à la fois."), MaxSteps))
	}
	if len(lookups) == 0 {
		return offer(s, env, calls, nil)
	}
	var eff Effects
	reads := make([]string, len(calls))
	for k, i := range lookups {
		look := rowOf(calls[i].Tool).check.read(calls[i].Args)
		args, err := canonicalArgs(look.Tool, look.Args, s, env)
		if err != nil {
			return invalidOutput(s, env, fmt.Sprintf("%s: %v", calls[i].Tool, err))
		}
		s, eff = dispatch(s, env, eff, OpenCall{Tool: look.Tool, Args: args, Check: true}, k)
		reads[i] = s.Turn.Open[len(s.Turn.Open)-1].CallID
	}
	s.Turn.Checking = &Checking{Calls: calls, Reads: reads}
	return s, eff
}

// checked goes on with a decision once the reads that looked up what its
// changes touch are back: a failed read is a failed step; a change that
// names something missing ends the turn with an answer saying so, and
// nothing of the decision runs or is proposed; otherwise the decision's
// calls run and its changes are proposed, showing what they touch.
func checked(s State, env Env, eff Effects, chk Checking) (State, Effects) {
	t := s.Turn
	seen := make([]json.RawMessage, len(chk.Calls))
	var missing []string
	for i, id := range chk.Reads {
		if id == "" {
			continue
		}
		j := slices.IndexFunc(t.Steps, func(st StepRecord) bool { return st.CallID == id })
		if j < 0 || !t.Steps[j].OK {
			t.Plan = nil
			reason := "the lookup did not answer"
			if j >= 0 {
				reason = t.Steps[j].Error
			}
			return replan(s, env, eff, reason)
		}
		seen[i] = t.Steps[j].Data
		if _, m := rowOf(chk.Calls[i].Tool).check.seen(chk.Calls[i].Args, seen[i], s, env); m != "" {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		t.Plan = nil
		s, more := finishAnswer(s, env, strings.Join(missing, "\n"))
		eff.add(more)
		return s, eff
	}
	s, more := offer(s, env, chk.Calls, seen)
	eff.add(more)
	if chk.Plan != nil {
		s = carryPlan(s, chk.Calls[0], chk.Plan, chk.SaveAs)
	}
	return s, eff
}

// offer runs a decision's calls, canonical: reads start at once, changes
// are proposed. seen[i], when set, is the lookup of what calls[i] touches.
func offer(s State, env Env, calls []Call, seen []json.RawMessage) (State, Effects) {
	t := s.Turn
	var eff Effects
	var proposals []PendingProposal
	for i, c := range calls {
		if env.NeedsConfirm(c.Tool) {
			if !canWrite(s.Roles) {
				// A refusal, not a failure to retry: no replan.
				return failTurn(s, env, contracts.CodeForbidden, say(s, "You have read-only access, so I can't change anything.", "Votre accès est en lecture seule : je ne peux rien modifier."))
			}
			p := PendingProposal{
				ID: deriveID("p", t.TurnID, strconv.Itoa(t.Round), strconv.Itoa(i)), TurnID: t.TurnID, Text: t.Text,
				Tool: c.Tool, Args: c.Args, Summary: summarize(c.Tool, c.Args, s, env), Revision: 1,
			}
			p.ExpiresAt, p.WarnAt = expiryOf(env)
			if i < len(seen) && seen[i] != nil {
				p.Seen = seen[i]
				p.Summary, _ = rowOf(c.Tool).check.seen(c.Args, seen[i], s, env)
			}
			proposals = append(proposals, p)
			continue
		}
		s, eff = dispatch(s, env, eff, OpenCall{Tool: c.Tool, Args: c.Args}, i)
	}
	if len(proposals) > 0 {
		// New proposals replace ones still waiting from before: the person
		// moved on, and one yes must not run a stale change.
		s, eff = propose(s, env, eff, t.TurnID, proposals)
	}
	if len(s.Turn.Open) == 0 {
		s = endTurn(s) // paused on the proposals
	}
	return s, eff
}

func canWrite(roles []string) bool {
	return slices.Contains(roles, contracts.RoleOwner) || slices.Contains(roles, contracts.RoleMember)
}

// advancePlan runs the next plan step, or hands back to the model when the
// plan is done or its stop condition holds.
func advancePlan(s State, env Env, eff Effects) (State, Effects) {
	t := s.Turn
	p := t.Plan
	if p.Next >= len(p.Steps) || (p.Next > 0 && p.StopWhen != nil && p.StopWhen.holds(s.Memory)) {
		t.Plan = nil
		eff.NeedModel = true
		return s, eff
	}
	step := p.Steps[p.Next]
	p.Next++
	args, err := bindVars(step.Args, s.Memory)
	if err == nil {
		args, err = canonicalArgs(step.Tool, args, s, env)
	}
	if err != nil {
		t.Plan = nil
		return replan(s, env, eff, fmt.Sprintf("step %d (%s): %v", p.Next, step.Tool, err))
	}
	if env.NeedsConfirm(step.Tool) {
		// A mutation in a plan goes through the same gate; the rest of the
		// plan waits with the proposal and carries on after the yes.
		rest := *p
		t.Plan = nil
		raw, _ := json.Marshal(args)
		s, eff = onCallsKeep(s, env, eff, Call{Tool: step.Tool, Args: raw})
		if s.Turn != nil && s.Turn.Checking != nil {
			// Looked up first: the plan waits with the lookup.
			s.Turn.Checking.Plan, s.Turn.Checking.SaveAs = &rest, step.SaveAs
			return s, eff
		}
		return carryPlan(s, Call{Tool: step.Tool, Args: args}, &rest, step.SaveAs), eff
	}
	return dispatch(s, env, eff, OpenCall{Tool: step.Tool, Args: args, SaveAs: step.SaveAs}, 0)
}

// carryPlan gives the proposal of call the rest of the plan that made it,
// to carry on after the yes.
func carryPlan(s State, call Call, rest *PlanState, saveAs string) State {
	for i := range s.Proposals {
		if s.Proposals[i].Tool == call.Tool && string(s.Proposals[i].Args) == string(call.Args) {
			s.Proposals[i].Plan, s.Proposals[i].SaveAs = rest, saveAs
		}
	}
	return s
}

func onCallsKeep(s State, env Env, eff Effects, c Call) (State, Effects) {
	s, more := onCalls(s, env, []Call{c})
	eff.add(more)
	return s, eff
}
