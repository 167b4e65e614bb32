package ingress_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// nextTurn is the next turn the scripted orchestrator saw that matches.
func nextTurn(t *testing.T, h *harness, match func(contracts.UserTurn) bool) contracts.UserTurn {
	t.Helper()
	for {
		turn := <-h.turns
		if match(turn) {
			return turn
		}
	}
}

// POST /v1/chat takes an approve_all over several proposal ids and the
// host's userContext.locale, and hands both to the orchestrator as they
// came; a batch of the wrong shape is a 400 and reaches nobody.
func TestChatApproveAllAndLocale(t *testing.T) {
	h := newHarness(t)
	tok := h.token("acme", "ann")
	a := h.chat(tok, `{"conversation_id":"c9","confirm":{"decision":"approve_all","proposal_ids":["p1","p2","p3"]},"userContext":{"locale":"fr-FR"}}`)
	if a.Answer == "" || a.ConversationID != "c9" {
		t.Fatalf("approve_all answer = %+v", a)
	}
	turn := nextTurn(t, h, func(u contracts.UserTurn) bool { return u.Confirm != nil })
	if c := turn.Confirm; c.Decision != contracts.DecisionApproveAll || c.ProposalID != "" || !slices.Equal(c.ProposalIDs, []string{"p1", "p2", "p3"}) || turn.Locale != "fr-FR" {
		t.Fatalf("approve_all turn = %+v %+v", turn, turn.Confirm)
	}
	// A locale purser cannot read is not an error, just not used.
	h.chat(tok, `{"message":"hello","userContext":{"locale":"en_US.UTF-8"}}`)
	if turn := nextTurn(t, h, func(u contracts.UserTurn) bool { return u.Text == "hello" }); turn.Locale != "" {
		t.Errorf("locale = %q, want none", turn.Locale)
	}
	for name, body := range map[string]string{
		"one id":             `{"confirm":{"decision":"approve_all","proposal_ids":["p1"]}}`,
		"an id twice":        `{"confirm":{"decision":"approve_all","proposal_ids":["p1","p1"]}}`,
		"with a proposal_id": `{"confirm":{"decision":"approve_all","proposal_id":"p1","proposal_ids":["p1","p2"]}}`,
		"ids for an approve": `{"confirm":{"decision":"approve","proposal_id":"p1","proposal_ids":["p1","p2"]}}`,
		"ids with a tool":    `{"confirm":{"tool":"add_expense","args":{},"proposal_ids":["p1","p2"]}}`,
		"a bad id":           `{"confirm":{"decision":"approve_all","proposal_ids":["p1","p.2"]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			assertError(t, h.do(call{token: tok, contentType: "application/json", body: body}), http.StatusBadRequest, "bad_request")
		})
	}
}

// A websocket confirm frame approves several proposals at once, and a
// message frame may say its locale; a locale that is not one is a bad
// frame.
func TestSocketApproveAllAndLocale(t *testing.T) {
	h := newHarness(t)
	c := h.dial(h.token("acme", "ann"))
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"bonjour","locale":"fr-FR"}`)
	c.next(contracts.FrameAnswer)
	if turn := nextTurn(t, h, func(u contracts.UserTurn) bool { return u.Text == "bonjour" }); turn.Locale != "fr-FR" {
		t.Errorf("message locale = %q, want fr-FR", turn.Locale)
	}
	c.send(`{"type":"confirm","id":"a1","conversation_id":"c1","decision":"approve_all","proposal_ids":["p1","p2"]}`)
	c.next(contracts.FrameAnswer)
	turn := nextTurn(t, h, func(u contracts.UserTurn) bool { return u.Confirm != nil })
	if !slices.Equal(turn.Confirm.ProposalIDs, []string{"p1", "p2"}) || turn.Confirm.Decision != contracts.DecisionApproveAll || turn.ConversationID != "c1" {
		t.Fatalf("approve_all turn = %+v", turn.Confirm)
	}
	c.send(`{"type":"message","id":"m2","conversation_id":"c1","text":"hi","locale":"fr FR"}`)
	if e := c.next(contracts.FrameError); e.Error.Code != contracts.ErrCodeBadFrame {
		t.Fatalf("bad locale = %+v", e.Error)
	}
}
