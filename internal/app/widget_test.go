package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
)

// The widget in Chromium, as a person uses it with the keyboard: Ctrl+D
// opens and closes it from the host page and from inside the chat, focus
// goes into the composer and back to where it was; Ctrl+Shift+D docks it
// to the right (opening it) and back to a bubble; docking outlasts a
// reload while open; Enter sends, Shift+Enter adds a line; the message
// shows at once with "Sending…" in the header and a "Thinking…" bubble
// until the turn's first frame; the dark theme follows the system and the
// switch overrides it both ways.
func TestWidgetShortcutsLayoutsAndThemes(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	b := startBrowser(t)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	layout := func() string { return b.eval(`return document.getElementById("purser-widget").dataset.layout`) }
	waitLayout := func(want string) {
		t.Helper()
		b.waitFor("the widget "+want, func() bool { return layout() == want })
	}
	waitLayout("closed")
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.top()

	// Ctrl+D from the host page opens the bubble and puts the keyboard in
	// the composer.
	b.click("#host-search")
	b.keys(keyControl, "d")
	waitLayout("bubble")
	b.intoFrame("#purser-widget")
	b.waitFor("the composer focused", func() bool {
		return b.eval(`return document.hasFocus() && document.activeElement.id`) == "message"
	})
	b.shot("01-bubble-light")
	// Ctrl+D inside the chat closes it; focus returns to the host's field.
	b.keys(keyControl, "d")
	b.top()
	waitLayout("closed")
	b.waitFor("focus back in the host page", func() bool { return b.eval(`return document.activeElement.id`) == "host-search" })

	// Ctrl+Shift+D docks (and opens); the host's content makes room.
	b.keys(keyControl, keyShift, "d")
	waitLayout("docked")
	if pad := b.eval(`return document.documentElement.style.paddingRight`); pad != "400px" {
		t.Errorf("docked: the host page's right padding is %q, want 400px", pad)
	}
	if w := b.eval(`const r = document.getElementById("purser-widget").getBoundingClientRect(); return r.right === document.documentElement.clientWidth && r.height === document.documentElement.clientHeight ? "edge" : JSON.stringify(r)`); w != "edge" {
		t.Errorf("docked frame is not a full-height right sidebar: %s", w)
	}
	b.shot("02-docked")
	// Docking persists while open, across a reload.
	b.reload()
	waitLayout("docked")
	// Ctrl+Shift+D inside the chat undocks to a bubble, still open.
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#message")
	b.keys(keyControl, keyShift, "d")
	b.top()
	waitLayout("bubble")
	if pad := b.eval(`return document.documentElement.style.paddingRight`); pad != "" {
		t.Errorf("undocked: the host page keeps right padding %q", pad)
	}
	if kept := b.eval(`return localStorage.getItem("purser.widget.docked")`); kept != "<nil>" {
		t.Errorf("undocked, but the docking is still remembered: %q", kept)
	}
	b.reload()
	waitLayout("closed")
	b.click("#host-search")
	b.keys(keyControl, "d")
	waitLayout("bubble")

	// Shift+Enter adds a line; Enter sends. Everything the person should
	// see on the way is recorded by an observer in the page.
	b.intoFrame("#purser-widget")
	b.waitFor("the composer focused", func() bool { return b.eval(`return document.activeElement.id`) == "message" })
	b.typeInto("#message", "add £4 flat white")
	b.keys(keyShift, keyEnter)
	b.typeInto("#message", "today")
	if v := b.eval(`return document.getElementById("message").value`); v != "add £4 flat white\ntoday" {
		t.Fatalf("after Shift+Enter the composer holds %q", v)
	}
	if n := len(b.texts("#transcript > li.user")); n != 0 {
		t.Fatalf("Shift+Enter sent the message (%d bubbles)", n)
	}
	b.script(`window.seen = [];
		new MutationObserver((records) => {
			for (const r of records) {
				for (const n of r.addedNodes) if (n.nodeType === 1 && n.parentNode && n.parentNode.id === "transcript") seen.push("+" + n.className);
				for (const n of r.removedNodes) if (n.nodeType === 1 && r.target.id === "transcript") seen.push("-" + n.className);
				if (r.target.id === "status" || (r.target.parentNode && r.target.parentNode.id === "status")) seen.push("status:" + document.getElementById("status").textContent);
			}
		}).observe(document.body, { childList: true, subtree: true, characterData: true });
		return true`, nil)
	b.keys(keyEnter)
	b.waitText("#transcript > li.proposal", "flat white")
	if v := b.eval(`return document.getElementById("message").value`); v != "" {
		t.Errorf("after Enter the composer still holds %q", v)
	}
	if got := b.texts("#transcript > li.user"); len(got) != 1 || got[0] != "add £4 flat white\ntoday" {
		t.Errorf("the sent message shows as %q", got)
	}
	b.waitExact("#status", "connected")
	var seen []string
	b.script(`return seen`, &seen)
	order := strings.Join(seen, " ")
	user, sending, thinking := index(seen, "+user pending"), index(seen, "status:Sending…"), index(seen, "+assistant thinking")
	gone := index(seen, "-assistant thinking")
	firstFrame := indexPrefix(seen, "+tool", "+assistant proposal")
	if user != 0 || sending < 0 || thinking < 0 || gone < 0 || firstFrame < 0 {
		t.Fatalf("what the page showed, in order: %s", order)
	}
	if gone > firstFrame {
		t.Errorf("the Thinking… bubble outlived the turn's first frame: %s", order)
	}
	if len(b.texts("#transcript > li.thinking")) != 0 {
		t.Errorf("a Thinking… bubble is left over")
	}
	b.shot("03-proposal-light")

	// Dark theme: the system's, then the switch both ways.
	bg := func() string {
		return b.eval(`return getComputedStyle(document.getElementById("panel")).backgroundColor`)
	}
	const light, dark = "rgb(255, 255, 255)", "rgb(23, 27, 32)"
	if got := bg(); got != light {
		t.Errorf("light system: panel background %s", got)
	}
	b.top()
	b.prefersDark(true)
	b.intoFrame("#purser-widget")
	b.waitFor("the dark theme from the system", func() bool { return bg() == dark })
	if p := b.eval(`return document.getElementById("theme-button").getAttribute("aria-pressed")`); p != "true" {
		t.Errorf("dark theme, but the switch says aria-pressed=%s", p)
	}
	b.shot("04-bubble-dark")
	b.click("#theme-button")
	b.waitFor("the switch to light", func() bool { return bg() == light })
	b.shot("05-switched-light-on-dark-system")
	b.top()
	b.prefersDark(false)
	b.intoFrame("#purser-widget")
	b.click("#theme-button")
	b.waitFor("the switch to dark", func() bool { return bg() == dark })
	b.reload()
	b.intoFrame("#purser-widget")
	b.waitFor("the chosen dark theme after reload", func() bool { return bg() == dark })

	// Escape closes the bubble.
	b.click("#launcher")
	b.waitFor("the composer focused", func() bool { return b.eval(`return document.activeElement.id`) == "message" })
	b.keys(keyEscape)
	b.top()
	waitLayout("closed")
}

// The edit flow on a phone-sized screen: the bubble fills the screen; Edit
// opens a form with the proposal's arguments; a change the server refuses
// is an error in the conversation and the card stays open; a valid change
// is approved and is what gets stored. The inbox, with its unread count,
// stays reachable at 390 px wide, and a notification pops up as a toast.
func TestWidgetEditOnAPhone(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	b := startBrowser(t)
	b.windowSize(390, 844)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	if w := b.eval(`return innerWidth`); w != "390" {
		t.Fatalf("the page is %s px wide, want 390", w)
	}
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.shot("01-phone-closed")
	b.click("#launcher")
	b.top()
	b.waitFor("a full-screen chat", func() bool {
		return b.eval(`const r = document.getElementById("purser-widget").getBoundingClientRect(); const e = document.documentElement; return r.width === e.clientWidth && r.height === e.clientHeight`) == "true"
	})
	b.intoFrame("#purser-widget")
	say(b, "add £4 flat white today")
	b.waitText("#transcript > li.proposal", "flat white")
	b.click(`#transcript > li.proposal button[data-decision="edit"]`)
	b.waitFor("the edit form", func() bool { return b.eval(`return document.querySelector("li.proposal form.edit").hidden`) == "false" })
	fields := b.eval(`return [...document.querySelectorAll("li.proposal form.edit input")].map(i => i.name + "=" + i.value).join(" ")`)
	if !strings.Contains(fields, "item=flat white") || !strings.Contains(fields, "amount=4") {
		t.Fatalf("the edit form holds %s", fields)
	}
	b.shot("02-phone-edit-form")

	setField := func(name, value string) {
		b.script(`const i = document.querySelector("li.proposal form.edit input[name='" + arguments[0] + "']"); i.value = ""; return true`, nil, name)
		b.typeInto(`li.proposal form.edit input[name="`+name+`"]`, value)
	}
	// The server refuses an amount that is not one.
	setField("amount", "lots")
	b.click("li.proposal form.edit button.save")
	b.waitText("#transcript > li.error", "not valid")
	b.waitFor("the card open again", func() bool {
		return b.eval(`return document.querySelector("li.proposal button[data-decision='approve']").disabled`) == "false"
	})
	b.shot("03-phone-edit-refused")

	b.click(`#transcript > li.proposal button[data-decision="edit"]`)
	setField("item", "oat flat white")
	setField("amount", "4.80")
	b.click("li.proposal form.edit button.save")
	b.waitText("#transcript > li.proposal .decided", "Approved with changes")
	b.waitText("#transcript > li.answer", "oat flat white")
	b.shot("04-phone-edited-answer")
	listed := listExpenses(t, info)
	if !strings.Contains(listed, `"item":"oat flat white"`) || !strings.Contains(listed, `"minor":480`) {
		t.Errorf("the stored expenses are not the edited ones: %s", listed)
	}
	if strings.Contains(listed, `"item":"flat white"`) {
		t.Errorf("the original proposal was stored too: %s", listed)
	}

	// A notification: a toast, the count on the inbox button, and the inbox
	// inside the screen.
	nc, err := nats.Connect(info.NATSURL, adminLogin(t, info))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	publishNotification(t, nc, "payslip-2", "Your payslip arrived")
	b.waitText("#toasts .toast", "Your payslip arrived")
	b.waitExact("#unread", "1")
	b.shot("05-phone-toast")
	b.click("#inbox-button")
	b.waitText("#notifications li.unread", "Your payslip arrived")
	if in := b.eval(`const r = document.getElementById("inbox").getBoundingClientRect(); return r.left >= 0 && r.right <= innerWidth && r.width > 300 && r.height > 200`); in != "true" {
		t.Errorf("the inbox is not on the phone's screen")
	}
	b.shot("06-phone-inbox")
	b.click("#notifications li.unread button")
	b.waitFor("read", func() bool { return b.eval(`return document.getElementById("unread").hidden`) == "true" })
	// Escape leaves the inbox for the chat, with the keyboard in the composer.
	b.keys(keyEscape)
	b.waitFor("back in the chat", func() bool { return b.eval(`return document.activeElement.id`) == "message" })
	// Closed, the widget still shows what arrives: a toast above the
	// launcher and the unread count on it.
	b.click("#close-button")
	publishNotification(t, nc, "payslip-3", "Your second payslip arrived")
	b.waitText("#toasts .toast", "Your second payslip arrived")
	b.waitExact("#launcher-badge", "1")
	b.top()
	b.waitFor("room for the toast", func() bool {
		return b.eval(`return document.getElementById("purser-widget").getBoundingClientRect().height`) == "260"
	})
	b.shot("07-phone-closed-toast")
}

// The widget in a foreign host page, served from another origin (another
// site: localhost, where purser is on 127.0.0.1) under its own strict CSP,
// with one script tag that names a token URL of the host's and the dark
// theme. The host's origin is in PURSER_ALLOWED_ORIGINS, which lets it
// frame the chat; the chat answers a question. The first token the host
// hands over is short-lived: when it expires the widget asks the host for
// a new one and carries on.
func TestWidgetInAForeignHostPage(t *testing.T) {
	t.Parallel()
	hostLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hostOrigin := fmt.Sprintf("localhost:%d", hostLn.Addr().(*net.TCPAddr).Port)
	info := startUp(t, func(c *config.Config) { c.AllowedOrigins = []string{hostOrigin} })
	purser := "http://" + info.HTTPAddr
	var asked atomic.Int32
	mux := http.NewServeMux()
	page := func(tag string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src "+purser+"; frame-src "+purser+"; connect-src 'self'; style-src 'self'")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html><head><title>Acme Books</title>
<script src="%s/widget.js" data-token-url="/session/purser-token" %s defer></script></head>
<body><h1>Acme Books</h1><p>Invoices, bills and the assistant in the corner.</p><input id="host-field"></body></html>`, purser, tag)
		}
	}
	mux.HandleFunc("GET /{$}", page(`data-theme="dark"`))
	mux.HandleFunc("GET /docked", page(`data-docked="true"`))
	mux.HandleFunc("GET /session/purser-token", func(w http.ResponseWriter, r *http.Request) {
		ttl := time.Hour
		if asked.Add(1) == 1 {
			ttl = 4 * time.Second
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"token": widgetToken(t, info, "carol", ttl)})
	})
	host := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = host.Serve(hostLn) }()
	t.Cleanup(func() { _ = host.Close() })

	resp, err := http.Get(purser + "/chat")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasSuffix(csp, "frame-ancestors 'self' "+hostOrigin) {
		t.Errorf("/chat's CSP = %q, want frame-ancestors 'self' %s only", csp, hostOrigin)
	}

	b := startBrowser(t)
	b.open("http://" + hostOrigin + "/")
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	if asked.Load() == 0 {
		t.Error("the widget connected without asking the host's token URL")
	}
	if th := b.eval(`return document.documentElement.dataset.theme`); th != "dark" {
		t.Errorf("data-theme=dark on the tag gave theme %q", th)
	}
	b.click("#launcher")
	say(b, "how much did I spend this month?")
	b.waitText("#transcript > li.answer", "")

	// Model text is markdown built as nodes, never HTML: tags stay text,
	// only http(s) and mailto links are links.
	b.script(`handle({type: "answer", turn_id: "t-md", answer: {content:
		"**Total** is <img src=x id=injected> and *more*:\n- [safe](https://example.com/a)\n- [bad](javascript:alert(1))\n\n`+"`code`"+`"}}); return true`, nil)
	md := b.waitText("#transcript > li.answer", "Total")
	if !strings.Contains(md, "<img src=x id=injected>") || b.eval(`return document.getElementById("injected") === null`) != "true" {
		t.Errorf("HTML in an answer became HTML: %q", md)
	}
	links := b.eval(`return [...document.querySelectorAll("#transcript li.answer .md a")].map(a => a.textContent + "=" + a.protocol + a.rel).join(" ")`)
	if links != "safe=https:noopener noreferrer" {
		t.Errorf("links in the answer: %q", links)
	}
	if got := b.eval(`const li = [...document.querySelectorAll("#transcript li.answer")].pop(); return ["strong", "em", "ul li", "code"].map(s => li.querySelectorAll(s).length).join()`); got != "1,1,2,1" {
		t.Errorf("markdown elements (strong, em, list items, code) = %s", got)
	}
	b.shot("01-foreign-host-dark")

	// The first token expires: the widget gets a new one from the host.
	b.waitFor("a second token from the host", func() bool { return asked.Load() >= 2 })
	b.waitExact("#status", "connected")
	say(b, "list my expenses this month")
	if a := replyTo(b, "list my expenses this month"); !strings.Contains(a, "no expenses") {
		t.Errorf("after a new token, the answer is %q", a)
	}
	b.top()
	b.click("#host-field")
	b.keys(keyControl, "d")
	b.waitFor("closed by Ctrl+D from the host page", func() bool {
		return b.eval(`return document.getElementById("purser-widget").dataset.layout`) == "closed"
	})

	// A host may start the widget docked.
	b.open("http://" + hostOrigin + "/docked")
	b.waitFor("docked from the start", func() bool {
		return b.eval(`return document.getElementById("purser-widget").dataset.layout`) == "docked"
	})
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	if th := b.eval(`return document.documentElement.dataset.theme`); th != "system" {
		t.Errorf("no data-theme gave theme %q, want system", th)
	}
}

// Two browsers signed in as the same user see the same live frames: a
// proposal asked for in one can be approved in the other, and both show
// the same answer. The second starts signed out: the chat shows a sign-in
// form and no composer until a token is pasted.
func TestWidgetTwoBrowsersOneUser(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	one, two := startBrowser(t), startBrowser(t)
	one.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	one.intoFrame("#purser-widget")
	one.waitExact("#status", "connected")
	one.click("#launcher")

	two.open("http://" + info.HTTPAddr + "/")
	two.intoFrame("#purser-widget")
	two.waitExact("#status", "signed out")
	two.click("#launcher")
	two.waitFor("the token field focused", func() bool { return two.eval(`return document.activeElement.id`) == "token" })
	if shown := two.eval(`const m = document.getElementById("message"); return m.checkVisibility() || document.getElementById("chat").hidden === false`); shown != "false" {
		t.Errorf("signed out, the composer is shown")
	}
	two.shot("00-second-browser-signed-out")
	two.typeInto("#token", info.DemoToken)
	two.click("#signin-form button")
	two.waitExact("#status", "connected")
	two.waitFor("the composer focused", func() bool { return two.eval(`return document.activeElement.id`) == "message" })

	say(one, "add £7.20 lunch today")
	two.waitText("#transcript > li.proposal", "lunch")
	one.waitText("#transcript > li.proposal", "lunch")
	two.click(`#transcript > li.proposal button[data-decision="approve"]`)
	a1 := one.waitText("#transcript > li.answer", "lunch")
	a2 := two.waitText("#transcript > li.answer", "lunch")
	if a1 != a2 {
		t.Errorf("the two browsers show different answers: %q and %q", a1, a2)
	}
	// The first browser's card is stale: approving it again is refused by
	// the server, said in the conversation, and the card stays closed.
	one.click(`#transcript > li.proposal button[data-decision="approve"]`)
	one.waitText("#transcript > li.error", "already decided")
	one.waitText("#transcript > li.proposal .decided", "No longer open")
	if n := one.eval(`return document.querySelectorAll("#transcript li.proposal button:not(:disabled)").length`); n != "0" {
		t.Errorf("%s buttons live on a decided proposal", n)
	}
	// A tool_start stored after its call's result (the notifier crashed
	// and its redelivery came late) leaves the finished call alone.
	done := one.eval(`return document.querySelector("#transcript > li.tool").textContent`)
	one.script(`const li = document.querySelector("#transcript > li.tool");
		handle({type: "tool_start", seq: state.lastSeq + 1, conversation_id: state.conversation, turn_id: "t-late",
			tool: {call_id: li.id.slice("call-".length), tool: "add_expense", status: "started"}}); return true`, nil)
	if got := one.eval(`return document.querySelector("#transcript > li.tool").textContent`); got != done || !strings.HasSuffix(got, " done") {
		t.Errorf("a late tool_start turned %q into %q", done, got)
	}
	if got := one.eval(`return document.getElementById("tool-status").textContent`); got != "" {
		t.Errorf("a late tool_start left the status %q", got)
	}
	// When the server delivers the person's own messages as user_message
	// frames, the other browser shows them; the browser that sent one
	// does not show it twice. (Injected here: the frame the page expects.)
	mine := one.eval(`return document.querySelector("#transcript li.user").dataset.id`)
	inject := `handle({type: "user_message", seq: state.lastSeq + 1, conversation_id: state.conversation, turn_id: "t-um", user_message: {id: arguments[0], text: arguments[1]}}); return true`
	one.script(inject, nil, mine, "add £7.20 lunch today")
	two.script(inject, nil, mine, "add £7.20 lunch today")
	for _, b := range []*browser{one, two} {
		if got := b.texts("#transcript > li.user"); len(got) != 1 || got[0] != "add £7.20 lunch today" {
			t.Errorf("after a user_message frame the person's messages show as %q", got)
		}
	}
	one.shot("01-first-browser")
	two.shot("02-second-browser")

	// A third browser, which never saw the proposal live, rebuilds the
	// conversation from the server: the decided proposal shows its
	// outcome, with no buttons the server would refuse.
	three := startBrowser(t)
	three.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	three.intoFrame("#purser-widget")
	three.waitExact("#status", "connected")
	three.click("#launcher")
	three.waitText("#transcript > li.proposal .decided", "Approved")
	if n := three.eval(`return document.querySelectorAll("#transcript li.proposal button:not(:disabled)").length`); n != "0" {
		t.Errorf("%s live buttons on a proposal decided on another device", n)
	}
	three.shot("03-third-browser-history")
}

// replyTo waits for the assistant's answer, question or error that
// follows the person's message text and returns it.
func replyTo(b *browser, text string) string {
	b.t.Helper()
	var got string
	b.waitFor("a reply to "+text, func() bool {
		got = b.eval(`const mine = [...document.querySelectorAll("#transcript > li.user")].filter(li => li.textContent === arguments[0]).pop();
			for (let n = mine && mine.nextElementSibling; n; n = n.nextElementSibling)
				if (n.matches(".answer, .clarify, .error, .proposal")) return n.textContent;
			return ""`, text)
		return got != ""
	})
	return got
}

func index(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func indexPrefix(list []string, prefixes ...string) int {
	for i, x := range list {
		for _, p := range prefixes {
			if strings.HasPrefix(x, p) {
				return i
			}
		}
	}
	return -1
}

// widgetToken mints a member's token in the demo tenant.
func widgetToken(t *testing.T, i Info, user string, ttl time.Duration) string {
	t.Helper()
	tok, err := auth.NewMinter(i.Secret, "purser", "purser", time.Now).Mint(DemoTenant, user, []auth.Role{auth.RoleMember}, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// listExpenses asks for the demo user's expenses this month over HTTP and
// returns the listing as JSON.
func listExpenses(t *testing.T, i Info) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+i.HTTPAddr+"/v1/chat",
		strings.NewReader(`{"history":[],"message":"list my expenses this month","conversation_id":"widget-check"}`))
	req.Header.Set("Authorization", "Bearer "+i.DemoToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct {
		Listed json.RawMessage `json:"listed"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &out) != nil {
		t.Fatalf("list expenses = %d %s", resp.StatusCode, body)
	}
	return string(out.Listed)
}
