package app

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
)

// turnEnd reads frames until the one that ends a turn.
func (c *wsClient) turnEnd() contracts.ServerFrame {
	c.t.Helper()
	for {
		f := c.nextAny()
		switch f.Type {
		case contracts.FrameAnswer, contracts.FrameProposal, contracts.FrameClarify, contracts.FrameError:
			return f
		}
	}
}

// With the default offline model, a name said about the landlord comes
// back three turns later from "what did I say earlier about my landlord?".
func TestLandlordNameComesBack(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	c := dial(t, info, mint(t, info, DemoTenant, "rosa", auth.RoleMember))
	turn := 0
	say := func(text string) contracts.ServerFrame {
		t.Helper()
		for {
			time.Sleep(600 * time.Millisecond) // a person's pace: at most 2 turns a second
			turn++
			c.send(fmt.Sprintf(`{"type":"message","id":"m%d","conversation_id":"home","text":%q}`, turn, text))
			f := c.turnEnd()
			if f.Error == nil || f.Error.Code != contracts.ErrCodeRateLimited {
				return f
			}
			time.Sleep(time.Second)
		}
	}
	say("my landlord is called Mr Okafor, rent is due on the 1st")
	say("what did I spend this month?")
	say("list my expenses")
	f := say("what did I say earlier about my landlord?")
	if f.Answer == nil || !strings.Contains(f.Answer.Content, "Okafor") {
		t.Fatalf("the look back answered %+v, want the landlord's name", f)
	}
}

// Several proposals waiting at once are approved with one approve_all:
// each runs with exactly its args and the answer reports each; the same
// batch again changes nothing. A batch naming one id that is not a
// waiting proposal of this person's conversation (another person's) is
// refused whole, and its good ids still wait.
func TestApproveAllEndToEnd(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	info := startUp(t, func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIKey, c.ModelName = srv.URL, "sk-test-0123456789-never-logged", "local-model"
	})
	adds := func(items ...string) llmtest.Reply {
		var calls []llmtest.Call
		for i, it := range items {
			calls = append(calls, llmtest.Call{Index: i, ID: fmt.Sprintf("call-%s", it), Name: contracts.ToolAddExpense,
				Args: []string{fmt.Sprintf(`{"item":%q,"amount":"%d.00","currency":"GBP"}`, it, 3+i)}})
		}
		return llmtest.ToolCalls(calls...)
	}
	proposals := func(c *wsClient, n int) []string {
		t.Helper()
		var ids []string
		for len(ids) < n {
			f := c.nextAny()
			if f.Type == contracts.FrameError {
				t.Fatalf("error while waiting for proposals: %+v", f.Error)
			}
			if f.Proposal != nil {
				if f.Proposal.ExpiresAt.Before(time.Now().Add(23 * time.Hour)) {
					t.Errorf("proposal expires at %v, want a day from now", f.Proposal.ExpiresAt)
				}
				ids = append(ids, f.Proposal.ProposalID)
			}
		}
		return ids
	}
	ann := dial(t, info, mint(t, info, DemoTenant, "ann", auth.RoleMember))
	bob := dial(t, info, mint(t, info, DemoTenant, "bob", auth.RoleMember))

	srv.Push(adds("lunch", "taxi", "cinema"))
	ann.send(`{"type":"message","id":"a1","conversation_id":"trip","text":"lunch, taxi and cinema"}`)
	ids := proposals(ann, 3)
	srv.Push(adds("flowers"))
	bob.send(`{"type":"message","id":"b1","conversation_id":"trip","text":"flowers"}`)
	bobs := proposals(bob, 1)

	// One foreign id: nothing runs, and the error lists it, in words that say nothing of bob's.
	time.Sleep(600 * time.Millisecond)
	ann.send(fmt.Sprintf(`{"type":"confirm","id":"a2","conversation_id":"trip","decision":"approve_all","proposal_ids":[%q,%q]}`, ids[0], bobs[0]))
	f := ann.turnEnd()
	if f.Error == nil || f.Error.Code != contracts.CodeProposalInvalid || !strings.Contains(f.Error.Message, "Nothing was changed") ||
		len(f.Error.Refused) != 1 || f.Error.Refused[0] != (contracts.RefusedProposal{ProposalID: bobs[0], Reason: "not_waiting"}) {
		t.Fatalf("a batch with bob's id = %+v", f)
	}
	if strings.Contains(f.Error.Message, bobs[0]) || strings.Contains(f.Error.Message, "flowers") {
		t.Errorf("the refusal tells ann of bob's proposal: %q", f.Error.Message)
	}

	// All good: each runs once and is reported.
	time.Sleep(600 * time.Millisecond)
	all := fmt.Sprintf(`{"type":"confirm","id":"a3","conversation_id":"trip","decision":"approve_all","proposal_ids":[%q,%q,%q]}`, ids[0], ids[1], ids[2])
	ann.send(all)
	f = ann.turnEnd()
	if f.Answer == nil || len(f.Answer.Batch) != 3 {
		t.Fatalf("approve_all = %+v", f)
	}
	for i, it := range f.Answer.Batch {
		if it.ProposalID != ids[i] || it.Status != "executed" {
			t.Errorf("batch item %d = %+v, want %s executed", i, it, ids[i])
		}
	}
	if !strings.Contains(f.Answer.Content, "3 of 3") || !strings.Contains(f.Answer.Content, "cinema") {
		t.Errorf("answer = %q", f.Answer.Content)
	}
	// A double click under another id runs nothing again.
	time.Sleep(600 * time.Millisecond)
	ann.send(strings.Replace(all, `"id":"a3"`, `"id":"a4"`, 1))
	if f = ann.turnEnd(); f.Error == nil || f.Error.Code != contracts.CodeProposalInvalid {
		t.Fatalf("the batch again = %+v, want it refused", f)
	}
	// Bob's proposal was untouched by ann's refused batch: he can still approve it.
	srv.Push(llmtest.Text("Added flowers."))
	bob.send(fmt.Sprintf(`{"type":"confirm","id":"b2","conversation_id":"trip","proposal_id":%q,"decision":"approve"}`, bobs[0]))
	if f = bob.turnEnd(); f.Answer == nil || f.Answer.Added == nil || f.Answer.Added.Item != "flowers" {
		t.Fatalf("bob's approve = %+v", f)
	}
}
