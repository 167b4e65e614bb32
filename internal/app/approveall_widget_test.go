package app

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
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

// startWithModel starts purser on the stand-in model server, which
// answers each message with the tool calls pushed to it.
func startWithModel(t *testing.T) (Info, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(t)
	info := startUp(t, func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIKey, c.ModelName = srv.URL, "sk-test-0123456789-never-logged", "local-model"
	})
	return info, srv
}

// addsAll is one model reply proposing to add each item (£3, £4, …).
func addsAll(items ...string) llmtest.Reply {
	var calls []llmtest.Call
	for i, it := range items {
		calls = append(calls, llmtest.Call{Index: i, ID: "call-" + strings.ReplaceAll(it, " ", "-"), Name: contracts.ToolAddExpense,
			Args: []string{fmt.Sprintf(`{"item":%q,"amount":"%d.00","currency":"GBP"}`, it, 3+i)}})
	}
	return llmtest.ToolCalls(calls...)
}

// One proposal has no Approve all; with two waiting, Approve all shows
// above the message box, a 44-pixel target, and each card says when it
// expires. Clicked, it writes one confirm naming both proposals, and
// every button of both cards is disabled while it is in flight.
func TestWidgetApproveAllPendingProposals(t *testing.T) {
	t.Parallel()
	info, model := startWithModel(t)
	b := startBrowser(t)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	watchFrames(b)

	model.Push(addsAll("pineapple"))
	say(b, "a pineapple")
	b.waitText("#transcript > li.proposal", "pineapple")
	if hidden := b.eval(`return document.getElementById("approve-all").hidden`); hidden != "true" {
		t.Errorf("Approve all shows with one proposal waiting")
	}
	// A turn proposing two replaces the one before (the server's rule).
	model.Push(addsAll("flat white", "lunch"))
	say(b, "a flat white and lunch")
	b.waitText("#transcript > li.proposal", "lunch")
	b.waitText("#transcript > li.proposal .decided", "Replaced by a newer proposal")
	b.waitExact("#approve-all", "Approve all (2)")
	var expiries []string
	b.script(`return [...document.querySelectorAll("#transcript > li.proposal time.expires")].slice(1).map(e => e.textContent)`, &expiries)
	for _, e := range expiries {
		if e != "Expires in 23 h" {
			t.Errorf("a proposal's expiry reads %q, want Expires in 23 h", e)
		}
	}
	if r := b.eval(`const r = document.getElementById("approve-all").getBoundingClientRect(); return r.height >= 44 && r.width >= 44`); r != "true" {
		t.Errorf("Approve all is not a 44 px target: %s", b.eval(`return JSON.stringify(document.getElementById("approve-all").getBoundingClientRect())`))
	}
	b.shot("01-two-pending")

	var ids []string
	b.script(`return [...document.querySelectorAll("#transcript > li.proposal")].slice(1).map(li => li.dataset.proposalId)`, &ids)
	// The click and the look at the buttons in one go: in flight, nothing
	// of either card can be pressed.
	var enabled []string
	b.script(`document.getElementById("approve-all").click();
const cards = [...document.querySelectorAll("#transcript > li.proposal")].slice(1);
return [...cards.flatMap(li => [...li.querySelectorAll("button")]), document.getElementById("approve-all")].filter(x => !x.disabled).map(x => x.textContent)`, &enabled)
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

	b.waitFor("both proposals approved", func() bool {
		got := b.texts("#transcript > li.proposal .decided")
		return len(got) == 3 && got[1] == "Approved" && got[2] == "Approved"
	})
	if hidden := b.eval(`return document.getElementById("approve-all").hidden`); hidden != "true" {
		t.Errorf("Approve all still shows with nothing waiting")
	}
	listed := ledgerText(t, info)
	for _, want := range []string{`"description":"flat white"`, `"description":"lunch"`} {
		if strings.Count(listed, want) != 1 {
			t.Errorf("%s is not stored once: %s", want, listed)
		}
	}
	if strings.Contains(listed, `"description":"pineapple"`) {
		t.Errorf("the replaced proposal was stored: %s", listed)
	}
	b.shot("03-approved")
}

// Three proposals wait; another device of the same person rejects one.
// Approve all over the three, as this tab shows them, is refused whole:
// the refusal is said in words, nothing is stored, and the two still
// waiting can be approved one by one.
func TestWidgetApproveAllRefusedWhole(t *testing.T) {
	t.Parallel()
	info, model := startWithModel(t)
	b := startBrowser(t)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	model.Push(addsAll("flat white", "lunch", "parking"))
	say(b, "a flat white, lunch and parking")
	b.waitText("#transcript > li.proposal", "parking")
	b.waitExact("#approve-all", "Approve all (3)")
	var ids []string
	b.script(`return [...document.querySelectorAll("#transcript > li.proposal")].map(li => li.dataset.proposalId)`, &ids)
	conv := b.eval(`return sessionStorage.getItem("purser.conversation")`)

	model.Push(llmtest.Text("OK, I won't add that."))
	phone := dial(t, info, info.DemoToken)
	phone.send(`{"type":"confirm","id":"other1","conversation_id":"` + conv + `","proposal_id":"` + ids[0] + `","decision":"reject"}`)
	if f := phone.turnEnd(); f.Error != nil {
		t.Fatalf("the other device's reject: %+v", f.Error)
	}

	b.click("#approve-all")
	refusal := b.waitText("#transcript > li.error", "Nothing was changed")
	if !strings.Contains(refusal, "1 of them is no longer waiting") || strings.Contains(refusal, ids[0]) {
		t.Errorf("the refusal reads %q, want it to say one no longer waits, in words", refusal)
	}
	// The one decided elsewhere, which the refusal lists, closes; the
	// two others open again, and Approve all is over them.
	b.waitFor("the cards open again", func() bool {
		return b.eval(`return [...document.querySelectorAll("#transcript > li.proposal button[data-decision='approve']")].map(x => x.disabled).join()`) == "true,false,false"
	})
	if d := b.texts("#transcript > li.proposal .decided"); strings.Join(d, "|") != "No longer open||" {
		t.Errorf("after the refusal the cards say %q", d)
	}
	b.waitExact("#approve-all", "Approve all (2)")
	b.shot("01-refused")
	listed := ledgerText(t, info)
	for _, item := range []string{"flat white", "lunch", "parking"} {
		if strings.Contains(listed, `"description":"`+item+`"`) {
			t.Errorf("%s was stored by a refused batch: %s", item, listed)
		}
	}
	model.Push(llmtest.Text("Added lunch."))
	b.click(`#transcript > li.proposal[data-proposal-id="` + ids[1] + `"] button[data-decision="approve"]`)
	b.waitText(replies, "Added lunch")
	if listed := ledgerText(t, info); !strings.Contains(listed, `"description":"lunch"`) {
		t.Errorf("lunch approved on its own was not stored: %s", listed)
	}
}

// ledgerText is the person's ledger as GET /v1/ledger gives it.
func ledgerText(t *testing.T, i Info) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+i.HTTPAddr+"/v1/ledger?limit=200", nil)
	req.Header.Set("Authorization", "Bearer "+i.DemoToken)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/ledger = %d %s", resp.StatusCode, body)
	}
	return string(body)
}
