package app

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The widget's conversations, as a person uses them: the header's list
// shows their conversations with titles, the latest used first; the
// keyboard moves through it and opens one; the chat then shows only that
// conversation's latest frames and loads older ones page by page as the
// person scrolls back, keeping what they were reading in place, until the
// beginning; what they write goes to the conversation on show. "New
// conversation" starts an empty one. The list works at 390 px in the dark
// theme too.
func TestWidgetConversationsListSwitchAndScrollBack(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	// A long conversation (40 turns, 80 frames) and, used later, a short one.
	c := dial(t, info, info.DemoToken)
	for i := 1; i <= 40; i++ {
		c.turn(fmt.Sprintf(`{"type":"message","id":"long%02d","conversation_id":"long-talk","text":"hello %02d"}`, i, i))
	}
	c.turn(`{"type":"message","id":"short1","conversation_id":"short-talk","text":"how much did I spend this month?"}`)

	b := startBrowser(t)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	b.waitFor("the composer focused", func() bool { return b.eval(`return document.activeElement.id`) == "message" })
	// A new tab (a new device) opens the conversation used last, with
	// both sides of it.
	b.waitExact("#conversation-title", "how much did I spend this month?")
	b.waitText("#transcript > li.user", "how much did I spend this month?")
	b.waitText("#transcript > li.answer", "You spent")

	// The list: titles, the latest used first; the keyboard is in it.
	const options = "#conversation-list > li[role=option]"
	b.click("#conversations-button")
	listed := func() string { return strings.Join(b.texts(options+" .title"), " | ") }
	b.waitFor("the two conversations listed", func() bool {
		return listed() == "how much did I spend this month? | hello 01"
	})
	if b.eval(`return document.getElementById("chat").hidden && document.getElementById("conversations-button").getAttribute("aria-expanded")`) != "true" {
		t.Errorf("the list is open, but the chat still shows or the button does not say it is expanded")
	}
	focused := func() string {
		return b.eval(`const e = document.activeElement; return e.getAttribute("role") === "option" ? e.querySelector(".title").textContent : e.id`)
	}
	b.waitFor("the first conversation focused", func() bool { return focused() == "how much did I spend this month?" })
	b.shot("01-list")
	b.keys("\uE015") // ArrowDown
	if got := focused(); got != "hello 01" {
		t.Fatalf("ArrowDown moved the focus to %q", got)
	}
	b.keys(keyEnter)

	// The long conversation: only its latest 30 frames, the newest in view.
	b.waitExact("#conversation-title", "hello 01")
	b.waitFor("the composer focused after choosing", func() bool { return b.eval(`return document.activeElement.id`) == "message" })
	said := func() []string { return b.texts("#transcript > li.user") }
	b.waitFor("the latest page", func() bool { return len(said()) > 0 })
	if got, want := strings.Join(said(), ","), hellos(26, 40); got != want {
		t.Fatalf("on opening, the transcript shows the messages %s, want only the latest page %s", got, want)
	}
	if n := len(b.texts("#transcript > li.answer")); n != 15 {
		t.Errorf("on opening, %d answers show, want 15", n)
	}
	if b.eval(`const s = document.getElementById("scroller"); return s.scrollHeight - s.scrollTop - s.clientHeight < 2`) != "true" {
		t.Errorf("on opening, the newest message is not in view")
	}
	b.shot("02-latest-page")

	// Scrolling to the top loads the page before, quietly saying so, and
	// what was at the top stays where it was.
	b.script(`window.statusSeen = [];
		const el = document.getElementById("history-status");
		new MutationObserver(() => statusSeen.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
		return true`, nil)
	top := func(text string) float64 {
		var y float64
		b.script(`const li = [...document.querySelectorAll("#transcript > li.user")].find(l => l.textContent === arguments[0]);
			return li.getBoundingClientRect().top`, &y, text)
		return y
	}
	scrollBack := func(oldest string) float64 {
		var y float64
		b.script(`const s = document.getElementById("scroller"); s.scrollTop = 0;
			const li = [...document.querySelectorAll("#transcript > li.user")].find(l => l.textContent === arguments[0]);
			return li.getBoundingClientRect().top`, &y, oldest)
		return y
	}
	before := scrollBack("hello 26")
	b.waitFor("the page before", func() bool { return len(said()) == 30 })
	if got, want := strings.Join(said(), ","), hellos(11, 40); got != want {
		t.Fatalf("after one page back the transcript shows %s, want %s", got, want)
	}
	if after := top("hello 26"); after < before-2 || after > before+2 {
		t.Errorf("the message at the top moved from y=%.0f to y=%.0f when older ones were loaded", before, after)
	}
	var seen []string
	b.script(`return statusSeen`, &seen)
	if index(seen, "Loading earlier messages…") < 0 {
		t.Errorf("no \"Loading earlier messages…\" while loading; the status line said %q", seen)
	}
	b.shot("03-older-page")

	// Back to the beginning: every message once, in order, and the end
	// marker.
	before = scrollBack("hello 11")
	b.waitExact("#history-status", "Beginning of the conversation")
	if got, want := strings.Join(said(), ","), hellos(1, 40); got != want {
		t.Fatalf("at the beginning the transcript shows %s, want %s", got, want)
	}
	if after := top("hello 11"); after < before-2 || after > before+2 {
		t.Errorf("the message at the top moved from y=%.0f to y=%.0f when the first page was loaded", before, after)
	}
	if n := len(b.texts("#transcript > li.answer")); n != 40 {
		t.Errorf("at the beginning %d answers show, want 40", n)
	}
	b.shot("04-beginning")

	// What the person writes now goes to this conversation.
	say(b, "hello again")
	replyTo(b, "hello again")
	if got := lastUserMessage(t, info, "long-talk"); got != "hello again" {
		t.Errorf("the long conversation's last message on the server is %q, want the one just written", got)
	}

	// New conversation: empty, named so, and the keyboard in the composer.
	b.click("#conversations-button")
	b.waitFor("the conversation on show selected and focused", func() bool {
		return listed() == "hello 01 | how much did I spend this month?" && focused() == "hello 01" &&
			b.eval(`return document.activeElement.getAttribute("aria-selected")`) == "true"
	})
	b.click("#new-conversation")
	b.waitFor("the composer focused in the new conversation", func() bool { return b.eval(`return document.activeElement.id`) == "message" })
	b.waitExact("#conversation-title", "New conversation")
	if n := len(b.texts("#transcript > li")); n != 0 {
		t.Errorf("a new conversation shows %d frames", n)
	}
	b.shot("05-new-conversation")
	say(b, "what did I spend this month?")
	replyTo(b, "what did I spend this month?")
	if got := said(); len(got) != 1 {
		t.Errorf("the new conversation shows the messages %q", got)
	}
	b.click("#conversations-button")
	b.waitFor("the new conversation listed first, selected", func() bool {
		return listed() == "what did I spend this month? | hello 01 | how much did I spend this month?" &&
			b.eval(`return document.querySelector("#conversation-list > li[aria-selected=true] .title").textContent`) == "what did I spend this month?"
	})

	// Switching by mouse to the short conversation shows it alone.
	b.click(`#conversation-list > li[data-id="short-talk"]`)
	b.waitExact("#conversation-title", "how much did I spend this month?")
	b.waitFor("the short conversation", func() bool {
		return strings.Join(said(), ",") == "how much did I spend this month?" && len(b.texts(replies)) == 1
	})
	b.waitExact("#history-status", "Beginning of the conversation")

	// On a phone, in the dark: the list fills the screen, and Escape
	// goes back to the chat.
	b.top()
	b.windowSize(390, 844)
	b.prefersDark(true)
	if w := b.eval(`return innerWidth`); w != "390" {
		t.Fatalf("the page is %s px wide, want 390", w)
	}
	b.waitFor("the chat filling the phone's screen", func() bool {
		return b.eval(`const r = document.getElementById("purser-widget").getBoundingClientRect(); const e = document.documentElement; return r.width === e.clientWidth && r.height === e.clientHeight`) == "true"
	})
	b.intoFrame("#purser-widget")
	b.click("#conversations-button")
	b.waitFor("the list in the dark", func() bool {
		return len(b.texts(options)) == 3 && b.eval(`return getComputedStyle(document.getElementById("panel")).backgroundColor`) == "rgb(23, 27, 32)"
	})
	if in := b.eval(`return [...document.querySelectorAll("#conversation-list > li, #new-conversation")].every(e => { const r = e.getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth && r.width > 0 })`); in != "true" {
		t.Errorf("the list does not fit a 390 px screen")
	}
	b.shot("06-phone-dark-list")
	b.keys(keyEscape)
	b.waitFor("back in the chat", func() bool {
		return b.eval(`return document.activeElement.id`) == "message" && b.eval(`return document.getElementById("chat").hidden`) == "false"
	})
	b.shot("07-phone-dark-chat")
}

// The client's duty: a message the server never acked is written again
// with the same id when the socket is back, and is one turn with one
// answer. Written while the socket is down, it waits (shown as sending)
// through a reload; written to a socket whose ack is lost, the server
// answers the resent id with that same turn.
func TestWidgetSendsAgainWhatWasNotAcked(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	b := startBrowser(t)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")

	// The socket goes down and stays down: the message waits.
	b.script(`state.ws.onclose = null; state.ws.close(); return true`, nil)
	b.waitFor("the socket closed", func() bool { return b.eval(`return state.ws.readyState`) == "3" })
	say(b, "how much did I spend this month?")
	b.waitExact("#status", "Sending…")
	pending := b.eval(`return document.querySelector("#transcript li.user").className`)
	if pending != "user pending" {
		t.Errorf("the unsent message shows as %q, want it pending", pending)
	}
	id := b.eval(`return document.querySelector("#transcript li.user").dataset.id`)
	conv := b.eval(`return state.conversation`)
	b.shot("01-waiting-offline")

	// A reload: the message is still there, waiting, and goes when the
	// socket opens: one turn, one answer.
	b.reload()
	b.intoFrame("#purser-widget")
	b.click("#launcher")
	replyTo(b, "how much did I spend this month?")
	b.waitFor("the message sent", func() bool {
		return b.texts("#status")[0] == "connected" &&
			b.eval(`return document.querySelector("#transcript li.user[data-id='"+arguments[0]+"']").classList.contains("pending")`, id) == "false"
	})
	if got := b.texts("#transcript > li.user"); len(got) != 1 {
		t.Errorf("after the resend the person's messages show as %q", got)
	}
	if n := len(b.texts(replies)); n != 1 {
		t.Errorf("after the resend %d replies show, want 1", n)
	}
	b.shot("02-sent-after-reload")

	// The frame reaches the server, but its ack is lost: the answer shows,
	// the header still says Sending… until the socket is back and the
	// same id is written again, which is the same turn.
	b.script(`const ws = state.ws; const real = ws.onmessage;
		ws.onmessage = (ev) => { if (JSON.parse(ev.data).type === "ack") { window.lostAcks = (window.lostAcks || 0) + 1; return; } real(ev); };
		return true`, nil)
	say(b, "what did I spend this month?")
	replyTo(b, "what did I spend this month?")
	b.waitExact("#status", "Sending…")
	b.script(`state.ws.close(); return true`, nil)
	b.waitFor("the resent message acked", func() bool {
		return b.texts("#status")[0] == "connected" && len(b.texts("#transcript > li.user.pending")) == 0
	})
	if n := len(b.texts(replies)); n != 2 {
		t.Errorf("after the lost ack %d replies show, want 2", n)
	}
	b.shot("03-ack-lost-sent-again")

	// The server's history agrees: two messages, two answers, one each.
	var page struct {
		Frames []contracts.ServerFrame `json:"frames"`
	}
	if status := getJSON(t, info, info.DemoToken, "/v1/conversations/"+conv+"/frames", &page); status != http.StatusOK {
		t.Fatalf("history = %d", status)
	}
	var kinds []string
	for _, f := range page.Frames {
		if f.Type == contracts.FrameUserMessage || f.Type == contracts.FrameAnswer || f.Type == contracts.FrameClarify {
			kinds = append(kinds, f.Type)
		}
	}
	if got := strings.Join(kinds, " "); got != "user_message answer user_message answer" {
		t.Errorf("the conversation on the server is %q, want each message once with one answer", got)
	}
	if page.Frames[0].UserMessage == nil || page.Frames[0].UserMessage.ID != id {
		t.Errorf("the first message on the server is %+v, want the one written offline (id %s)", page.Frames[0].UserMessage, id)
	}
}

// The client's duty when the server could not queue a message: while the
// notifier is down (restarting), the ingress cannot tell whether a turn is
// new and answers it "unavailable". The page keeps the message, pending,
// says it is retrying and writes it again, with the same id, until it
// goes: one message, one answer, never shown as failed.
func TestWidgetRetriesWhatCouldNotBeQueued(t *testing.T) {
	t.Parallel()
	svc := startApart(t, storetest.SQLiteDSN(t))
	token := svc.mint("acme", "ann", auth.RoleMember)
	b := startBrowser(t)
	b.open("http://" + svc.ingress + "/chat#token=" + token)
	b.waitExact("#status", "connected")
	// What the header says, and the ids of the unavailable errors the
	// socket brings (heard after the page's own handler).
	b.script(`window.statusSeen = [];
		const el = document.getElementById("status");
		new MutationObserver(() => statusSeen.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
		window.unavailable = [];
		state.ws.addEventListener("message", (ev) => {
			const f = JSON.parse(ev.data);
			if (f.type === "error" && f.error.code === "unavailable") unavailable.push(f.error.id);
		});
		return true`, nil)

	svc.stop(config.ModeNotifier)
	const text = "how much did I spend this month?"
	say(b, text)
	id := b.eval(`return document.querySelector("#transcript li.user").dataset.id`)
	b.waitFor("the message refused as unavailable", func() bool { return b.eval(`return unavailable.length`) != "0" })
	if got := b.eval(`return document.querySelector("#transcript li.user").className`); got != "user pending" {
		t.Fatalf("the message the server could not queue shows as %q, want it pending, to be sent again", got)
	}
	if b.eval(`return state.outbox.some((o) => o.id === arguments[0])`, id) != "true" {
		t.Fatalf("the message the server could not queue left the outbox: a reload would not send it")
	}
	if got := b.texts("#status")[0]; !strings.Contains(got, "retrying") {
		t.Errorf("the header says %q while the message waits to be sent again, want it to say it is retrying", got)
	}
	// The page tries again on its own, with the same id.
	b.waitFor("the message sent again and refused again", func() bool { return b.eval(`return unavailable.length >= 2`) == "true" })
	var ids []string
	b.script(`return unavailable`, &ids)
	for _, got := range ids {
		if got != id {
			t.Errorf("the unavailable errors name %q, want each the message's id %s", ids, id)
			break
		}
	}
	b.shot("01-retrying")

	// The notifier is back: the next try goes through.
	svc.start(config.ModeNotifier)
	replyTo(b, text)
	b.waitFor("the message acked", func() bool {
		return b.eval(`return document.querySelector("#transcript li.user").className`) == "user acked" &&
			b.texts("#status")[0] == "connected"
	})
	if got := b.texts("#transcript > li.user"); len(got) != 1 {
		t.Errorf("after the retries the person's messages show as %q, want one", got)
	}
	if n := len(b.texts(replies)); n != 1 {
		t.Errorf("after the retries %d replies show, want 1", n)
	}
	if got := b.texts("#transcript > li.error"); len(got) != 0 {
		t.Errorf("after the retries errors show: %q", got)
	}
	if n := b.eval(`return state.outbox.length`); n != "0" {
		t.Errorf("%s frames wait in the outbox after the ack", n)
	}
	var seen []string
	b.script(`return statusSeen`, &seen)
	if index(seen, "Not sent yet; retrying…") < 0 {
		t.Errorf("the header never said it was retrying; it said %q", seen)
	}
	b.shot("02-sent")

	// The server's history agrees: the message once, by its id, answered once.
	var page struct {
		Frames []contracts.ServerFrame `json:"frames"`
	}
	conv := b.eval(`return state.conversation`)
	if status := getJSON(t, Info{HTTPAddr: svc.ingress}, token, "/v1/conversations/"+conv+"/frames", &page); status != http.StatusOK {
		t.Fatalf("history = %d", status)
	}
	var kinds []string
	for _, f := range page.Frames {
		switch f.Type {
		case contracts.FrameUserMessage:
			if f.UserMessage == nil || f.UserMessage.ID != id {
				t.Errorf("the message on the server is %+v, want id %s", f.UserMessage, id)
			}
			fallthrough
		case contracts.FrameAnswer, contracts.FrameClarify, contracts.FrameError:
			kinds = append(kinds, f.Type)
		}
	}
	if got := strings.Join(kinds, " "); got != "user_message answer" {
		t.Errorf("the conversation on the server is %q, want the message once with one answer", got)
	}
}

// turn sends a message frame and waits for its answer. The server lets a
// user start 2 turns a second after a burst of 10: a turn it refuses as
// rate limited is sent again, with the same id, a moment later.
func (c *wsClient) turn(frame string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c.send(frame)
	for {
		f, data := c.read(ctx, "the answer to "+frame)
		switch {
		case f.Type == contracts.FrameAnswer:
			return
		case f.Type == contracts.FrameError && f.Error != nil && f.Error.Code == "rate_limited":
			time.Sleep(500 * time.Millisecond)
			c.send(frame)
		case f.Type == contracts.FrameError || f.Type == contracts.FrameClarify || f.Type == contracts.FrameProposal:
			c.t.Fatalf("got %s while waiting for the answer to %s", data, frame)
		}
	}
}

// hellos is "hello 01,hello 02,…" from i to j.
func hellos(i, j int) string {
	var out []string
	for n := i; n <= j; n++ {
		out = append(out, "hello "+fmt.Sprintf("%02d", n))
	}
	return strings.Join(out, ",")
}

// lastUserMessage is the text of the latest user_message frame of the
// demo user's conversation conv, read over HTTP.
func lastUserMessage(t *testing.T, i Info, conv string) string {
	t.Helper()
	var page struct {
		Frames []contracts.ServerFrame `json:"frames"`
	}
	if status := getJSON(t, i, i.DemoToken, "/v1/conversations/"+conv+"/frames?limit="+strconv.Itoa(10), &page); status != http.StatusOK {
		t.Fatalf("history of %s = %d", conv, status)
	}
	last := ""
	for _, f := range page.Frames {
		if f.UserMessage != nil {
			last = f.UserMessage.Text
		}
	}
	return last
}
