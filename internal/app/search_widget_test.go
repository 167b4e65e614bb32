package app

import (
	"strings"
	"testing"
)

// A search's sources in the widget are the records it found, named by
// their titles, never a tool: one opens below the answer, fetched with
// the person's token, with its date, amount, description and category,
// and opening it again closes it.
func TestWidgetOpensASearchSource(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	base := "http://" + info.HTTPAddr
	b := startBrowser(t)
	b.open(base + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")

	b.typeInto("#message", "add £12.99 Tesco groceries on 2026-11-02")
	b.keys(keyEnter)
	b.waitText("#transcript > li.proposal", "tesco")
	b.click(`#transcript > li.proposal button[data-decision="approve"]`)
	b.waitText("#transcript > li.answer", "Added")
	// The index is written beside the ledger, not in its transaction.
	searchUntil(t, info, info.DemoToken, "tesco", func(s testSearch) bool { return len(s.Results) > 0 })

	b.typeInto("#message", "find my Tesco payments")
	b.keys(keyEnter)
	b.waitFor("the search's answer and its sources", func() bool {
		return b.eval(`const li = [...document.querySelectorAll("#transcript li.answer")].pop(); if (li && li.textContent.includes("I found") && li.querySelector(".citations a.citation")) { li.id = "found"; return true } return false`) == "true"
	})
	labels := b.texts("#found .citations a.citation")
	if joined := strings.Join(labels, " | "); strings.Contains(joined, "search") || strings.Contains(joined, "find my Tesco payments") {
		t.Fatalf("the sources are %q: a tool, or the question itself", labels)
	}
	b.click(`#found .citations a.citation[data-kind="entry"]`)
	rec := b.waitText("#found .record", "£12.99")
	for _, want := range []string{"Date: 2 Nov 2026", "Description:", "Category:"} {
		if !strings.Contains(rec, want) {
			t.Errorf("the record shows %q, want %q in it", rec, want)
		}
	}
	b.shot("search-source-open")
	b.click(`#found .citations a.citation[data-kind="entry"]`)
	b.waitFor("the record closed", func() bool {
		return b.eval(`return document.querySelectorAll("#found .record").length`) == "0"
	})
}
