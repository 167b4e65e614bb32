package orchestrator

import (
	"fmt"
	"slices"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// onApproveAll approves several waiting proposals at once, all or none:
// every id must name a proposal of this conversation (its state holds
// only its own person's) that still waits and has not expired, and none
// may be part of a plan, whose later steps wait for that one yes alone.
// One that is not refuses the whole batch and changes nothing; the
// refusal lists each such id with its reason (TurnError.Refused), and its
// words name the proposals by what they would do, never another person's.
// Approved, each runs exactly its stored args under its own id, as a
// single approve would; the turn ends with each one's outcome.
func onApproveAll(s State, t contracts.UserTurn, ids []string, env Env) (State, Effects) {
	var problems []string
	var refused []contracts.RefusedProposal
	unknown := 0
	batch := make([]PendingProposal, 0, len(ids))
	for _, id := range ids {
		i := slices.IndexFunc(s.Proposals, func(p PendingProposal) bool { return p.ID == id })
		switch {
		case i >= 0 && s.Proposals[i].Plan != nil:
			refused = append(refused, contracts.RefusedProposal{ProposalID: id, Reason: "in_plan"})
			problems = append(problems, say(s, s.Proposals[i].Summary+" is a step of a longer task; approve it on its own",
				s.Proposals[i].Summary+" est une étape d'une tâche plus longue ; approuvez-la seule"))
		case i >= 0:
			batch = append(batch, s.Proposals[i])
		case expiredProposal(s, id) != nil:
			refused = append(refused, contracts.RefusedProposal{ProposalID: id, Reason: "expired"})
			problems = append(problems, say(s, expiredProposal(s, id).Summary+" has expired", expiredProposal(s, id).Summary+" a expiré"))
		default:
			// Another person's id, or one decided already: nothing about
			// it is said, not even that it exists.
			refused = append(refused, contracts.RefusedProposal{ProposalID: id, Reason: "not_waiting"})
			unknown++
		}
	}
	if unknown > 0 {
		problems = append(problems, say(s, fmt.Sprintf("%d of them %s no longer waiting for your yes", unknown, plural(unknown, "is", "are")),
			fmt.Sprintf("%d %s plus votre accord", unknown, plural(unknown, "n'attend", "n'attendent"))))
	}
	if len(refused) > 0 {
		out := turnError(t.TurnID, "approve-all", contracts.CodeProposalInvalid,
			say(s, "Nothing was changed, because ", "Rien n'a été modifié, car ")+strings.Join(problems, "; ")+".")
		te := out.Payload.(contracts.TurnError)
		te.Refused = refused
		out.Payload = te
		return s, Effects{Outputs: []Output{out}}
	}
	s.Proposals = slices.DeleteFunc(slices.Clone(s.Proposals), func(p PendingProposal) bool { return slices.Contains(ids, p.ID) })
	summaries := make([]string, len(batch))
	for i, p := range batch {
		summaries[i] = p.Summary
	}
	s = s.withHistory(Entry{Role: "user", Text: "Yes to all: " + strings.Join(summaries, " "), TurnID: t.TurnID, At: env.Now})
	s.Turn = &Turn{TurnID: t.TurnID, Text: batch[0].Text, StartedAt: env.Now, Batch: slices.Clone(ids)}
	var eff Effects
	for k, p := range batch {
		eff.Changes = append(eff.Changes, ProposalChange{ID: p.ID, From: "pending", To: "approved"})
		s, eff = dispatch(s, env, eff, OpenCall{Tool: p.Tool, Args: p.Args, ProposalID: p.ID, Decision: "approved"}, k)
	}
	return s, eff
}

// finishBatch ends an approve_all once every call is back: one line per
// proposal, in the order named, and the same as a list the client reads.
func finishBatch(s State, env Env, eff Effects) (State, Effects) {
	t := s.Turn
	items := make([]contracts.BatchItem, 0, len(t.Batch))
	lines := make([]string, 0, len(t.Batch))
	done := 0
	for _, id := range t.Batch {
		j := slices.IndexFunc(t.Steps, func(st StepRecord) bool { return st.ProposalID == id })
		item := contracts.BatchItem{ProposalID: id, Status: "failed", Summary: say(s, "It did not answer.", "Pas de réponse.")}
		if j >= 0 {
			item.Summary = DescribeStepIn(s.Locale, t.Steps[j])
			if t.Steps[j].OK {
				item.Status = "executed"
				done++
			}
		}
		items = append(items, item)
		lines = append(lines, "- "+item.Summary)
	}
	head := say(s, fmt.Sprintf("Done: %d of %d changes made.", done, len(items)),
		fmt.Sprintf("C'est fait : %d %s sur %d.", done, plural(done, "modification", "modifications"), len(items)))
	s, more := finishAnswer(s, env, head+"\n"+strings.Join(lines, "\n"))
	for i, op := range more.Outputs {
		if a, ok := op.Payload.(contracts.Answer); ok {
			a.Batch = items
			more.Outputs[i].Payload = a
		}
	}
	eff.add(more)
	return s, eff
}
