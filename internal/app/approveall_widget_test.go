package app

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// watchFrames records, in the widget's frame, every frame the chat writes
// on its socket, in window.sentFrames.
func watchFrames(b *browser) {
	b.t.Helper()
	b.script(`if (!window.sentFrames) {
  window.sentFrames = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) { window.sentFrames.push(String(data)); return send.call(this, data); };
}
return true`, nil)
}

// sentConfirms are the confirm frames the chat wrote since watchFrames.
func sentConfirms(b *browser) []map[string]any {
	b.t.Helper()
	var raw []string
	b.script(`return window.sentFrames`, &raw)
	var out []map[string]any
	for _, r := range raw {
		var f map[string]any
		if json.Unmarshal([]byte(r), &f) == nil && f["type"] == "confirm" {
			out = append(out, f)
		}
	}
	return out
}

// One proposal has no Approve all; with two waiting, Approve all shows
// above the message box, a 44-pixel target, and each card says when it
// expires. Clicked, it writes one confirm naming both proposals, and
// every button of both cards is disabled while it is in flight.
func TestWidgetApproveAllPendingProposals(t *testing.T) {
	info := startUp(t)
	b := startBrowser(t)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	watchFrames(b)

	say(b, "add £4 flat white today")
	b.waitText("#transcript > li.proposal", "flat white")
	if hidden := b.eval(`return document.getElementById("approve-all").hidden`); hidden != "true" {
		t.Errorf("Approve all shows with one proposal waiting")
	}
	say(b, "add £12.50 lunch today")
	b.waitText("#transcript > li.proposal", "lunch")
	b.waitExact("#approve-all", "Approve all (2)")
	for _, e := range b.texts("#transcript > li.proposal time.expires") {
		if e != "Expires in 23 h" {
			t.Errorf("a proposal's expiry reads %q, want Expires in 23 h", e)
		}
	}
	if r := b.eval(`const r = document.getElementById("approve-all").getBoundingClientRect(); return r.height >= 44 && r.width >= 44`); r != "true" {
		t.Errorf("Approve all is not a 44 px target: %s", b.eval(`return JSON.stringify(document.getElementById("approve-all").getBoundingClientRect())`))
	}
	b.shot("01-two-pending")

	var ids []string
	b.script(`return [...document.querySelectorAll("#transcript > li.proposal")].map(li => li.dataset.proposalId)`, &ids)
	// The click and the look at the buttons in one go: in flight, nothing
	// of either card can be pressed.
	var enabled []string
	b.script(`document.getElementById("approve-all").click();
return [...document.querySelectorAll("#transcript > li.proposal button, #approve-all")].filter(x => !x.disabled).map(x => x.textContent)`, &enabled)
	if len(enabled) != 0 {
		t.Errorf("buttons still enabled while Approve all is in flight: %q", enabled)
	}
	confirms := sentConfirms(b)
	if len(confirms) != 1 {
		t.Fatalf("Approve all wrote %d confirm frames, want 1: %v", len(confirms), confirms)
	}
	c := confirms[0]
	var named []string
	if list, ok := c["proposal_ids"].([]any); ok {
		for _, id := range list {
			named = append(named, id.(string))
		}
	}
	slices.Sort(named)
	slices.Sort(ids)
	if c["decision"] != "approve_all" || !slices.Equal(named, ids) || c["id"] == "" || c["conversation_id"] == "" || c["proposal_id"] != nil {
		t.Errorf("the confirm written is %v, want approve_all over %v with its own id and the conversation", c, ids)
	}
	b.shot("02-in-flight")

	if !serverApprovesAll(t) {
		// Until the server takes approve_all it refuses the frame: the
		// refusal is said, and both proposals can still be decided.
		b.waitText("#transcript > li.error", "Nothing was approved")
		b.waitFor("both cards open again", func() bool {
			return b.eval(`return [...document.querySelectorAll("#transcript > li.proposal button[data-decision='approve']")].every(x => !x.disabled)`) == "true"
		})
		b.waitExact("#approve-all", "Approve all (2)")
		b.shot("03-refused")
		return
	}
	b.waitFor("both proposals approved", func() bool {
		got := b.texts("#transcript > li.proposal .decided")
		return len(got) == 2 && got[0] == "Approved" && got[1] == "Approved"
	})
	if hidden := b.eval(`return document.getElementById("approve-all").hidden`); hidden != "true" {
		t.Errorf("Approve all still shows with nothing waiting")
	}
	listed := listExpenses(t, info)
	for _, want := range []string{`"item":"flat white"`, `"item":"lunch"`} {
		if !strings.Contains(listed, want) {
			t.Errorf("%s was not stored: %s", want, listed)
		}
	}
	b.shot("03-approved")
}

// serverApprovesAll reports whether the socket's contract takes a confirm
// with decision approve_all over a list of proposals.
func serverApprovesAll(t *testing.T) bool {
	t.Helper()
	_, err := contracts.DecodeClientFrame([]byte(`{"type":"confirm","id":"c1","conversation_id":"k1","decision":"approve_all","proposal_ids":["p1","p2"]}`))
	return err == nil
}
