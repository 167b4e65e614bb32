package app

import (
	"net/http"
	"strings"
	"testing"
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
}
