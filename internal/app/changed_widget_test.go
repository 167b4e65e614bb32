package app

import (
	"encoding/json"
	"testing"
)

// hostChanges is what the host page heard: the widget's "purser:changed"
// DOM events and the messages it posted to the page.
type hostChanges struct {
	Events   []map[string]any `json:"events"`
	Messages []map[string]any `json:"messages"`
}

// The widget tells its host page when the ledger changed: after "add
// coffee £3" and Approve, the page gets one "purser:changed" event and one
// message saying an expense was added (with its id); a read-only question
// tells it nothing, and neither does the answer replayed by a resume; the
// demo page says it was updated.
func TestChangedWidgetTellsTheHost(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	b := startBrowser(t)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	b.script(`window.heard = { events: [], messages: [] };
		window.addEventListener("purser:changed", (e) => heard.events.push(e.detail));
		window.addEventListener("message", (e) => {
			if (e.source === window && e.data && e.data.type === "purser:changed") heard.messages.push(e.data);
		});
		return true`, nil)
	heard := func() hostChanges {
		t.Helper()
		var h hostChanges
		b.script(`return heard`, &h)
		return h
	}

	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	b.waitFor("the composer focused", func() bool { return b.eval(`return document.activeElement.id`) == "message" })

	say(b, "what did I spend this month?")
	replyTo(b, "what did I spend this month?")
	b.top()
	if h := heard(); len(h.Events) != 0 || len(h.Messages) != 0 {
		t.Fatalf("a read-only question told the host %+v", h)
	}

	b.intoFrame("#purser-widget")
	say(b, "add coffee £3")
	b.waitText("#transcript > li.proposal", "coffee")
	b.click(`#transcript > li.proposal button[data-decision="approve"]`)
	b.waitText("#transcript > li.proposal .decided", "Approved")
	b.waitText("#transcript > li.answer", "coffee")
	b.top()
	b.waitFor("the host told of the added expense", func() bool {
		h := heard()
		return len(h.Events) > 0 && len(h.Messages) > 0
	})
	b.waitText("#ledger-updated", "Updated just now: an expense added")

	// Another read-only turn, and a resume that replays the whole
	// conversation (the added expense's answer too): nothing more.
	b.intoFrame("#purser-widget")
	say(b, "what did I spend this month?")
	replyTo(b, "what did I spend this month?")
	seen := b.eval(`return String(state.lastSeq)`)
	b.script(`state.ws.onclose = null; state.ws.close(); state.lastSeq = 0; connect(); return true`, nil)
	b.waitFor("the replay caught up", func() bool {
		return b.eval(`return String(state.lastSeq)`) == seen && b.eval(`return String(state.opened && !state.catchingUp)`) == "true"
	})
	b.top()

	h := heard()
	for name, got := range map[string][]map[string]any{"events": h.Events, "messages": h.Messages} {
		if len(got) != 1 {
			t.Errorf("the host heard %d %s, want 1: %+v", len(got), name, got)
			continue
		}
		ids, _ := got[0]["ids"].([]any)
		if got[0]["type"] != "purser:changed" || got[0]["what"] != "expense" || got[0]["change"] != "added" || len(ids) != 1 {
			raw, _ := json.Marshal(got)
			t.Errorf("the host's %s = %s, want one {type: purser:changed, what: expense, change: added, ids: [the expense's id]}", name, raw)
		}
	}
	b.shot("changed-host-updated")
}
