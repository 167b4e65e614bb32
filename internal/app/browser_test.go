package app

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The web page in a real browser against purser up: the token handed over
// in the fragment leaves the address bar; a question, a proposal approved
// with a click, the import's notification in the inbox; a reload shows the
// same conversation again through resume, and a read notification stays
// read.
func TestWebPageInABrowser(t *testing.T) {
	info := startUp(t)
	b := startBrowser(t)
	page := "http://" + info.HTTPAddr + "/"

	resp, err := http.Get(page)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("page CSP = %q", csp)
	}

	b.open(page + "#token=" + info.DemoToken)
	b.waitText("#status", "connected")
	if u := b.url(); strings.Contains(u, "token") {
		t.Errorf("the token stayed in the address bar: %s", u)
	}

	b.typeInto("#message", "Find my last Visa statement and process it")
	b.click("#send")
	b.waitText("#transcript li.proposal", "visa_statement_")
	b.click(`#transcript li.proposal button[data-decision="approve"]`)
	b.waitText("#transcript li.proposal .decided", "Approved")
	b.waitText("#transcript li.answer", "visa_statement_")
	note := b.waitText("#notifications li.unread", "Imported 12 transactions")
	b.waitText("#unread", "1")

	b.typeInto("#message", "I want to add an item")
	b.click("#send")
	b.waitText("#transcript li.clarify", "What item")

	// Reading the notification marks it read on the server.
	b.click("#notifications li.unread")
	b.waitFor("the notification marked read", func() bool { return len(b.texts("#notifications li.unread")) == 0 })

	before := b.texts("#transcript li:not(.tool)")
	b.reload()
	b.waitText("#status", "connected")
	b.waitText("#transcript li.answer", "visa_statement_")
	b.waitFor("the whole conversation back after reload", func() bool {
		return strings.Join(b.texts("#transcript li:not(.tool)"), "|") == strings.Join(before, "|")
	})
	// The replayed proposal shows its outcome, not live buttons.
	b.waitText("#transcript li.proposal .decided", "Approved")
	var enabled int
	b.script(`return document.querySelectorAll("#transcript li.proposal button:not(:disabled)").length`, &enabled)
	if enabled != 0 {
		t.Errorf("after reload %d proposal buttons are live", enabled)
	}
	b.waitText("#notifications li", note)
	b.screenshot()

	if unread := b.texts("#notifications li.unread"); len(unread) != 0 {
		t.Errorf("after reload, unread = %q", unread)
	}

	// A dropped socket: the page reconnects by itself.
	b.script(`state.ws.close(); return true`, nil)
	b.waitText("#status", "retrying")
	b.waitText("#status", "connected")

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
	b.waitText("#transcript li.notification", "Your payslip arrived")
	if n := len(b.texts("#transcript li.answer")); n != 1 {
		t.Errorf("after the resume the transcript has %d answers, want 1 (nothing shown twice)", n)
	}
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
