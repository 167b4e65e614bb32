package app

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner/mailbox"
)

// hostileEML is a statement mail whose sender chose its text to disguise
// it: a subject that hides the rest of a terminal line (ESC[8m), a sender
// name that is a markdown link, and a file name with a right-to-left
// override ("statement<U+202E>fdp.csv" reads "statementvsc.pdf").
func hostileEML(now time.Time) string {
	return "From: \"[click](https://evil.example)\" <statements@evil.example>\r\n" +
		"Subject: Your Evil Bank statement =?utf-8?q?=1B[8m_is_ready?=\r\n" +
		"Date: " + now.Add(-time.Hour).Format(time.RFC1123Z) + "\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nYour statement is attached.\r\n" +
		"--b\r\nContent-Type: text/csv\r\nContent-Disposition: attachment; filename*=utf-8''statement%E2%80%AEfdp.csv\r\n\r\n" +
		"Date,Description,Amount,Currency\r\n2026-01-05,[click](https://evil.example) TESCO,-12.50,GBP\r\n" +
		"--b--\r\n"
}

// startHostile runs purser up with the demo mailbox and the hostile mail.
func startHostile(t *testing.T) Info {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	if err := mailbox.WriteDemo(dir, DemoTenant, DemoUser, now); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, DemoTenant, DemoUser, "97-evil.eml"), []byte(hostileEML(now)), 0o600); err != nil {
		t.Fatal(err)
	}
	return startUp(t, func(c *config.Config) { c.MailboxDir = dir })
}

// Say these to find the hostile mail and to import it.
const (
	findHostile   = "Search my mail for the Evil Bank statement"
	importHostile = "Find my Evil Bank statement and process it"
)

// neutral fails t when text a person is shown holds an escape, a bidi
// override or the sender's link as live markdown, or lacks the sender's
// name quoted as text.
func neutral(t *testing.T, what, got string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\u009b", "\u202e", "[click](", "https://evil"} {
		if strings.Contains(got, bad) {
			t.Errorf("%s = %q holds %q", what, got, bad)
		}
	}
}

// strings of a JSON document, every one, joined by new lines.
func jsonStrings(t *testing.T, raw []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %q: %v", raw, err)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v + "\n")
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

// quotedSender is the hostile From header as the server quotes it.
const quotedSender = `"\[click\](https\://evil.example)" \<statements@evil.example\>`

func TestHostileMailOverTheSocket(t *testing.T) {
	t.Parallel()
	info := startHostile(t)
	c := dial(t, info, info.DemoToken)

	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"` + findHostile + `"}`)
	found := c.next(contracts.FrameAnswer).Answer.Content
	neutral(t, "search answer", found)
	if !strings.Contains(found, quotedSender) || !strings.Contains(found, "statementfdp.csv") {
		t.Errorf("search answer = %q, want the sender quoted and the file name without its override", found)
	}

	c.send(`{"type":"message","id":"m2","conversation_id":"c1","text":"` + importHostile + `"}`)
	p := c.next(contracts.FrameProposal).Proposal
	neutral(t, "proposal summary", p.Summary)
	if !strings.Contains(p.Summary, "sent by "+quotedSender) || !strings.Contains(p.Summary, "never imported") {
		t.Errorf("proposal summary = %q, want the real sender quoted and the new-sender warning", p.Summary)
	}
	c.send(`{"type":"confirm","id":"m3","conversation_id":"c1","proposal_id":"` + p.ProposalID + `","decision":"approve"}`)
	got := c.nextEach(contracts.FrameAnswer, contracts.FrameNotification)
	neutral(t, "import answer", got[contracts.FrameAnswer].Answer.Content)
	n := got[contracts.FrameNotification].Notification
	neutral(t, "notification", n.Title+"\n"+n.Body+"\n"+string(n.Data))
	if n.Kind != "import_completed" || n.Title != "Imported 1 transaction from statementfdp.csv" {
		t.Errorf("notification = %+v", n)
	}

	c.send(`{"type":"message","id":"m4","conversation_id":"c1","text":"show my transactions at Tesco"}`)
	txs := c.next(contracts.FrameAnswer).Answer.Content
	neutral(t, "transactions", txs)
	if !strings.Contains(txs, `\[click\](https\://evil.example) TESCO`) {
		t.Errorf("transactions = %q, want the statement's description quoted", txs)
	}
}

func TestHostileMailOverHTTP(t *testing.T) {
	t.Parallel()
	info := startHostile(t)
	status, body := chatCall(t, info, info.DemoToken, `{"history":[],"message":"`+findHostile+`"}`)
	raw, _ := json.Marshal(body)
	answer, _ := body["answer"].(string)
	if status != http.StatusOK || !strings.Contains(answer, quotedSender) {
		t.Fatalf("search = %d %s", status, raw)
	}
	neutral(t, "search answer", jsonStrings(t, raw))

	status, body = chatCall(t, info, info.DemoToken, `{"history":[],"message":"`+importHostile+`"}`)
	raw, _ = json.Marshal(body)
	proposal, _ := body["proposal"].(map[string]any)
	summary, _ := proposal["summary"].(string)
	if status != http.StatusOK || !strings.Contains(summary, "sent by "+quotedSender) {
		t.Fatalf("import = %d %s", status, raw)
	}
	neutral(t, "import answer", jsonStrings(t, raw))
}

func TestHostileMailOverServerSentEvents(t *testing.T) {
	t.Parallel()
	info := startHostile(t)
	for _, message := range []string{findHostile, importHostile} {
		req, _ := http.NewRequest(http.MethodPost, "http://"+info.HTTPAddr+"/v1/chat", strings.NewReader(`{"history":[],"message":"`+message+`"}`))
		req.Header.Set("Authorization", "Bearer "+info.DemoToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var shown strings.Builder
		sc := bufio.NewScanner(strings.NewReader(string(raw)))
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				shown.WriteString(jsonStrings(t, []byte(data)))
			}
		}
		neutral(t, "events of "+message, shown.String())
		if want := "event: answer"; message == importHostile {
			want = "event: proposal"
			if !strings.Contains(shown.String(), "sent by "+quotedSender) {
				t.Errorf("events of %q hold no quoted sender:\n%s", message, raw)
			}
		} else if !strings.Contains(string(raw), want) {
			t.Errorf("events of %q hold no %s:\n%s", message, want, raw)
		}
	}
}

// The widget shows the hostile mail's text as text: the sender's link is
// no <a> in the assistant's answer, a proposal shows the quoted sender
// without backslashes, and nothing shown holds an override.
func TestHostileMailInTheWidget(t *testing.T) {
	t.Parallel()
	info := startHostile(t)
	b := startBrowser(t)
	b.open("http://" + info.HTTPAddr + "/#token=" + info.DemoToken)
	b.intoFrame("#purser-widget")
	b.waitExact("#status", "connected")
	b.click("#launcher")
	b.waitFor("the composer focused", func() bool { return b.eval(`return document.activeElement.id`) == "message" })

	const shownSender = `"[click](https://evil.example)" <statements@evil.example>`
	say(b, findHostile)
	answer := b.waitText("#transcript > li.answer", "Evil Bank")
	if !strings.Contains(answer, "from "+shownSender) || !strings.Contains(answer, "statementfdp.csv") {
		t.Errorf("search answer shows %q, want the sender as the text it is", answer)
	}
	say(b, importHostile)
	summary := b.waitText("#transcript > li.proposal .summary", "Evil Bank")
	if !strings.Contains(summary, "sent by "+shownSender+"?") || !strings.Contains(summary, "never imported") {
		t.Errorf("proposal shows %q, want the real sender and the warning", summary)
	}
	b.click(`#transcript > li.proposal button[data-decision="approve"]`)
	b.waitText("#toasts .toast", "Imported 1 transaction from statementfdp.csv")
	b.shot("hostile-mail")

	if links := b.eval(`return [...document.querySelectorAll("a")].filter(a => /evil/.test(a.href + a.textContent)).map(a => a.outerHTML).join("\n")`); links != "" {
		t.Errorf("the page links to the sender's address:\n%s", links)
	}
	if shown := b.eval(`return document.body.innerText + document.body.textContent`); strings.ContainsAny(shown, "\x1b\u202e") || strings.Contains(shown, `\[`) {
		t.Errorf("the page shows %q: an escape, an override or a backslash of the quoting", shown)
	}
}
