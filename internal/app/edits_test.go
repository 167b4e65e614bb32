package app

import (
	"net/http"
	"strings"
	"testing"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

// propose asks for a change as token in conversation conv and returns
// the proposal's id.
func propose(t *testing.T, info Info, token, conv, text string) string {
	t.Helper()
	status, p := chatCall(t, info, token, `{"history":[],"conversation_id":"`+conv+`","message":"`+text+`"}`)
	proposal, _ := p["proposal"].(map[string]any)
	if status != http.StatusOK || proposal == nil {
		t.Fatalf("%q = %d %v, want a proposal", text, status, p)
	}
	return proposal["proposal_id"].(string)
}

// listed counts the expenses named item that token lists.
func listed(t *testing.T, info Info, token, item string) int {
	t.Helper()
	_, list := chatCall(t, info, token, `{"history":[],"message":"list my expenses since 2026-01-01"}`)
	return strings.Count(asJSON(t, list["listed"]), item)
}

// An id-less edit is keyed by its arguments: a refused edit decides
// nothing, so a valid edit after it is applied; the same edit sent twice
// is one turn and runs once; two different edits are two turns.
func TestEditsAreKeyedByTheirArguments(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	bob := mint(t, info, "demo", "bob", auth.RoleMember)
	edit := func(pid, args string) string {
		return `{"history":[],"conversation_id":"edits","confirm":{"proposal_id":"` + pid + `","decision":"edit","args":` + args + `}}`
	}
	bad := `{"item":"wombat stew","amount":"12.00","currency":"EUR","date":"2026-13-45"}`
	good := `{"item":"wombat stew","amount":"13.00","currency":"EUR","date":"2026-11-21"}`
	// The same arguments, spaced and ordered otherwise.
	goodAgain := `{ "date": "2026-11-21", "currency": "EUR", "amount": "13.00", "item": "wombat stew" }`

	pid := propose(t, info, bob, "edits", "add 12 EUR for wombat stew on 2026-11-20")
	for range 2 { // a refused edit sent again is refused again, as it was
		status, body := chatCall(t, info, bob, edit(pid, bad))
		if status != http.StatusUnprocessableEntity || body["error"] != contracts.CodeInvalidArgs || !strings.Contains(body["detail"].(string), "still waits") {
			t.Fatalf("edit with a bad date = %d %v, want 422 invalid_args, the proposal waiting", status, body)
		}
	}
	status, body := chatCall(t, info, bob, edit(pid, good))
	added, _ := body["added"].(map[string]any)
	if status != http.StatusOK || added == nil || !strings.Contains(asJSON(t, added), `"minor":1300`) {
		t.Fatalf("valid edit after a refused one = %d %v, want it applied", status, body)
	}
	for _, again := range []string{good, goodAgain} {
		if status, body := chatCall(t, info, bob, edit(pid, again)); status != http.StatusConflict || body["error"] != "already_decided" {
			t.Fatalf("the same edit again = %d %v, want 409 already_decided", status, body)
		}
	}
	if n := listed(t, info, bob, "wombat stew"); n != 1 {
		t.Fatalf("wombat stew listed %d times after one edit sent three times, want 1", n)
	}

	// Over the websocket, id-less confirms take the same way (another
	// user, clear of bob's rate limit).
	carol := mint(t, info, "demo", "carol", auth.RoleMember)
	pid = propose(t, info, carol, "edits-ws", "add 7 EUR for quince jam on 2026-11-20")
	c := dial(t, info, carol)
	wsEdit := func(args string) string {
		return `{"type":"confirm","conversation_id":"edits-ws","proposal_id":"` + pid + `","decision":"edit","args":` + args + `}`
	}
	c.send(wsEdit(strings.ReplaceAll(bad, "wombat stew", "quince jam")))
	if f := c.next(contracts.FrameError); f.Error == nil || f.Error.Code != contracts.CodeInvalidArgs {
		t.Fatalf("refused edit over the socket = %+v", f.Error)
	}
	goodJam := strings.ReplaceAll(good, "wombat stew", "quince jam")
	c.send(wsEdit(goodJam))
	first := c.next(contracts.FrameAnswer)
	if first.Answer == nil || first.Answer.Added == nil || first.Answer.Added.Amount.Minor != 1300 {
		t.Fatalf("valid edit over the socket after a refused one = %+v, want it applied", first.Answer)
	}
	c.send(wsEdit(goodJam))
	again := c.next(contracts.FrameAnswer)
	if again.TurnID != first.TurnID || again.Seq != first.Seq {
		t.Fatalf("the same edit again over the socket answered %+v, want the first answer %+v", again, first)
	}
	if n := listed(t, info, carol, "quince jam"); n != 1 {
		t.Fatalf("quince jam listed %d times after one edit sent twice, want 1", n)
	}
}
