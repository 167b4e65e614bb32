package app

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The demo host page in a real browser against purser up, the way purser
// up's link opens it: the token handed over in the fragment leaves the
// address bar and reaches the widget's frame; the launcher opens the chat;
// a question, a proposal approved with a click, the import's notification
// as a toast and in the inbox; a reload shows the same conversation again
// through resume, and a read notification stays read; a dropped socket
// reconnects, resumes, and sends again what was never acked.
func TestWebPageInABrowser(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	b := startBrowser(t)
	page := "http://" + info.HTTPAddr + "/"

	for _, path := range []string{"", "widget.js", "chat"} {
		resp, err := http.Get(page + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") {
			t.Errorf("/%s CSP = %q", path, csp)
		}
	}

	b.open(page + "#token=" + info.DemoToken)
	if u := b.url(); strings.Contains(u, "token") {
		t.Errorf("the token stayed in the address bar: %s", u)
	}
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.shot("01-closed-launcher")
	b.click("#launcher")
	b.waitFor("the panel open", func() bool { return b.eval(`return document.getElementById("panel").hidden`) == "false" })
	b.waitFor("the composer focused", func() bool { return b.eval(`return document.activeElement.id`) == "message" })

	say(b, "Find my last Visa statement and process it")
	b.waitText("#transcript > li.proposal", "visa_statement_")
	b.shot("02-proposal")
	b.click(`#transcript > li.proposal button[data-decision="approve"]`)
	b.waitText("#transcript > li.proposal .decided", "Approved")
	b.waitText("#transcript > li.answer", "visa_statement_")
	note := b.waitText("#notifications li.unread", "Imported 12 transactions")
	b.waitText("#unread", "1")
	b.waitText("#toasts .toast", "Imported 12 transactions")
	b.shot("03-answer-and-toast")
	if cites := b.eval(`return [...document.querySelectorAll("#transcript li.answer a.citation")].map(a => document.getElementById(a.hash.slice(1)) ? "linked" : "dangling").join()`); !strings.Contains(cites, "linked") || strings.Contains(cites, "dangling") {
		t.Errorf("the answer's citations are %q, want links to the tool lines they cite", cites)
	}

	say(b, "I want to add an item")
	b.waitText("#transcript > li.clarify", "What item")

	// Reading the notification in the inbox marks it read on the server.
	b.click("#inbox-button")
	b.click("#notifications li.unread button")
	b.waitFor("the notification marked read", func() bool { return len(b.texts("#notifications li.unread")) == 0 })
	b.click("#inbox-close")

	// After a reload the conversation is its history on the server: the
	// same messages, answers and proposals (notifications are the inbox's).
	const said = "#transcript > li:not(.tool):not(.notification)"
	before := b.texts(said)
	b.reload()
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.waitText("#transcript > li.answer", "visa_statement_")
	b.waitFor(fmt.Sprintf("the whole conversation back after reload (before: %q)", before), func() bool {
		return strings.Join(b.texts(said), "|") == strings.Join(before, "|")
	})
	// The replayed proposal shows its outcome, not live buttons.
	b.waitText("#transcript > li.proposal .decided", "Approved")
	if n := b.eval(`return document.querySelectorAll("#transcript li.proposal button:not(:disabled)").length`); n != "0" {
		t.Errorf("after reload %s proposal buttons are live", n)
	}
	b.waitText("#notifications li", note)
	if unread := b.texts("#notifications li.unread"); len(unread) != 0 {
		t.Errorf("after reload, unread = %q", unread)
	}
	if n := len(b.texts("#toasts .toast")); n != 0 {
		t.Errorf("a replayed notification popped up again as %d toasts", n)
	}

	// A bubble is not kept open across a reload: the launcher opens it.
	b.click("#launcher")

	// A dropped socket: the page reconnects by itself.
	b.script(`state.ws.close(); return true`, nil)
	b.waitText("#status", "retrying")
	b.waitExact("#status", "connected")

	// A message written to a socket that dies before the ack (here: the
	// frame is lost on the way) is sent again, with the same id, after
	// the reconnect: answered once.
	b.script(`const ws = state.ws; const real = ws.send.bind(ws);
		ws.send = (data) => { if (JSON.parse(data).type === "message") { window.lostFrame = data; return; } real(data); };
		return true`, nil)
	say(b, "how much did I spend this month?")
	b.waitText("#status", "Sending…")
	lost := b.eval(`return JSON.parse(window.lostFrame).id`)
	b.script(`state.ws.close(); return true`, nil)
	replyTo(b, "how much did I spend this month?")
	b.waitFor("the resent message acked", func() bool {
		return b.eval(`return document.querySelector("#transcript li.user[data-id='"+arguments[0]+"']").className`, lost) == "user acked"
	})
	b.waitFor("the header back from Sending…", func() bool { return b.texts("#status")[0] == "connected" })
	if n := len(b.texts(replies)); n != 3 {
		t.Errorf("after the resend the transcript has %d replies, want 3", n)
	}

	// And misses nothing: while it is cut off a notification arrives; when
	// it connects again it resumes after the last frame it showed.
	// The frame has gone past (the notifier published it to the deliver
	// subject) before the page connects, so only resume can bring it.
	b.script(`state.ws.onclose = null; state.ws.close(); return true`, nil)
	nc, err := nats.Connect(info.NATSURL, adminLogin(t, info))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	delivered := make(chan *nats.Msg, 16)
	if _, err := nc.ChanSubscribe("purser.deliver."+DemoTenant+"."+DemoUser, delivered); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	publishNotification(t, nc, "payslip-1", "Your payslip arrived")
	select {
	case m := <-delivered:
		if !strings.Contains(string(m.Data), "Your payslip arrived") {
			t.Fatalf("delivered %s", m.Data)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the notification was never delivered")
	}
	b.script(`connect(); return true`, nil)
	b.waitText("#transcript > li.notification", "Your payslip arrived")
	if n := len(b.texts(replies)); n != 3 {
		t.Errorf("after the resume the transcript has %d replies, want 3 (nothing shown twice)", n)
	}
	b.shot("04-after-resume")
}

// replies are the assistant's answers and questions in the transcript.
const replies = "#transcript > li.answer, #transcript > li.clarify"

// say types text into the composer and presses Enter.
func say(b *browser, text string) {
	b.t.Helper()
	b.typeInto("#message", text)
	b.typeInto("#message", keyEnter)
}

// publishNotification puts a Notification for the demo user on NOTIFY, as
// the toolrunner would.
func publishNotification(t *testing.T, nc *nats.Conn, id, title string) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(contracts.Notification{ID: id, Kind: "info", Title: title, CreatedAt: time.Now().UTC()})
	subject, _ := bus.NotifySubject(DemoTenant, DemoUser)
	msg := bus.NewMessage("n-"+id, b, bus.Headers{Type: contracts.TypeNotification, Tenant: DemoTenant, User: DemoUser, Correlation: id})
	if err := bus.NewPublisher(nc, js).Publish(subject, msg); err != nil {
		t.Fatal(err)
	}
}
