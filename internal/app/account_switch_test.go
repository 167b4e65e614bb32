package app

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/gmailtest"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/googletest"
)

// A link's token for another account does not sign a tab in by itself:
// /chat#token=<someone else's> names both accounts and asks; until the
// person says yes the tab stays theirs, so Gmail connected from it is
// linked to the confirmed account, not the link's. Staying keeps the
// tab's account; switching takes the link's.
func TestFragmentTokenOfAnotherAccountAsksFirst(t *testing.T) {
	t.Parallel()
	const (
		clientSecret = "GOCSPX-switch-test-client-secret"
		access       = "ya29.switch-test-access-token"
	)
	google := googletest.New(t, "purser-switch.apps.googleusercontent.com", clientSecret, access)
	gm := gmailtest.New(t, access)
	// Google sends the browser back to this server: its address is
	// known before it starts, from a listener it is handed open (one
	// closed and bound again could be taken by another test meanwhile).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	info := startUp(t, func(c *config.Config) {
		c.HTTPAddr, c.HTTPListener = addr, l
		c.Mail = "gmail"
		c.MailTokenKey = strings.Repeat("5b", 32)
		c.GmailEndpoint = gm.URL
		c.GoogleClientID = google.ClientID
		c.GoogleClientSecret = clientSecret
		c.GoogleRedirectURL = "http://" + addr + "/v1/mail/callback"
		c.GoogleAuthURL, c.GoogleTokenURL, c.GoogleRevokeURL = google.AuthURL, google.TokenURL, google.RevokeURL
	})
	forbidInLogs(t, clientSecret, access)
	base := "http://" + info.HTTPAddr
	olga := info.DemoToken // demo (demo)
	mallory := mint(t, info, DemoTenant, "mallory", auth.RoleMember)
	b := startBrowser(t)
	stored := func() string { return b.eval(`return sessionStorage.getItem("purser.token") || ""`) }
	connected := func(token string) bool {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+"/v1/mail", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /v1/mail = %d %s", resp.StatusCode, body)
		}
		return strings.Contains(string(body), `"connected":true`)
	}
	// openLink opens base+path#token=token in this tab as a new page load
	// (from another page: a fragment alone would not load /chat again).
	openLink := func(token string) {
		b.open(base + "/mail")
		b.open(base + "/chat#token=" + token)
	}

	// The tab signs in with its own link and says whose account it is.
	b.open(base + "/chat#token=" + olga)
	b.waitExact("#status", "connected")
	b.waitExact("#account", "demo (demo)")

	// Someone else's link: both accounts named, a question, nothing
	// connected, and the tab's stored token still its own.
	openLink(mallory)
	b.waitExact("#switch-to", "mallory (demo)")
	b.waitExact("#switch-from", "demo (demo)")
	b.shot("01-switch-asked")
	if chat := b.eval(`return document.getElementById("chat").hidden`); chat != "true" {
		t.Errorf("the chat shows while the switch is asked")
	}
	if got := stored(); got != olga {
		t.Errorf("while the switch is asked the tab stores the link's token")
	}
	if u := b.url(); strings.Contains(u, "token") {
		t.Errorf("the link's token stayed in the address bar: %s", u)
	}

	// Gmail connected from the tab now is the tab's confirmed account's.
	b.open(base + "/mail")
	b.waitExact("#mail-account-name", "demo (demo)")
	b.click("#mail-connect")
	b.waitText("h1", "Gmail is connected")
	if !connected(olga) || connected(mallory) {
		t.Fatalf("Gmail connected for demo %v, for mallory %v; want demo's only", connected(olga), connected(mallory))
	}

	// Staying keeps the tab's account.
	openLink(mallory)
	b.click("#switch-keep")
	b.waitExact("#status", "connected")
	b.waitExact("#account", "demo (demo)")
	if got := stored(); got != olga {
		t.Errorf("after staying the tab stores another token")
	}

	// Switching takes the link's, for the chat and the Gmail page alike.
	openLink(mallory)
	b.click("#switch-accept")
	b.waitExact("#status", "connected")
	b.waitExact("#account", "mallory (demo)")
	if got := stored(); got != mallory {
		t.Errorf("after switching the tab does not store the link's token")
	}
	b.open(base + "/mail")
	b.waitExact("#mail-account-name", "mallory (demo)")
	b.waitExact("#mail-status", "Gmail not connected")

	// A fresh token of the tab's own account needs no question.
	again := mint(t, info, DemoTenant, "mallory", auth.RoleMember, auth.RoleViewer) // another token, the same account
	b.open(base + "/chat#token=" + again)
	b.waitExact("#status", "connected")
	b.waitExact("#account", "mallory (demo)")
	if got := stored(); got != again {
		t.Errorf("a fresh token of the same account was not taken")
	}

	// The demo host page's link (the one purser up prints) asks the same.
	for _, accept := range []bool{false, true} {
		b.open(base + "/mail")
		b.open(base + "/#token=" + olga)
		var text string
		b.call(http.MethodGet, "/alert/text", nil, &text)
		if !strings.Contains(text, "demo (demo)") || !strings.Contains(text, "mallory (demo)") {
			t.Errorf("the demo page asks %q, want both accounts named", text)
		}
		want := again
		if accept {
			want = olga
			b.call(http.MethodPost, "/alert/accept", map[string]any{}, nil)
		} else {
			b.call(http.MethodPost, "/alert/dismiss", map[string]any{}, nil)
		}
		b.waitFor("the demo page loaded", func() bool { return b.eval(`return document.readyState`) == "complete" })
		if got := stored(); got != want {
			t.Errorf("demo page, switch accepted %v: the tab stores %s's token", accept, map[string]string{olga: "demo", again: "mallory", "": "no one"}[got])
		}
	}
}
