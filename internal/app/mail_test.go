package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/gmailtest"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/googletest"
)

// Gmail through purser up, connected for real: the demo user connects
// over HTTP through a fake Google, asks for a statement from their Gmail
// (every access token expires at once, so every call refreshes), and when
// Google stops honouring the refresh token the user is told once and the
// tool says to reconnect.
func TestGmailConnectedThroughUp(t *testing.T) {
	t.Parallel()
	const (
		clientSecret = "GOCSPX-app-test-client-secret"
		access       = "ya29.app-test-access-token"
	)
	google := googletest.New(t, "purser-app.apps.googleusercontent.com", clientSecret, access)
	google.ExpiresIn = 5 // under oauth2's 10 s margin: each call refreshes
	csv := []byte("Date,Description,Amount\n2026-10-01,TESCO,-12.99\n")
	gm := gmailtest.New(t, access, gmailtest.Message{ID: "18c0visa", From: "Northbank <statements@northbank.example>", Subject: "Your Visa statement",
		Date: time.Now().AddDate(0, 0, -3), Attachments: []gmailtest.Attachment{{Name: "visa.csv", MediaType: "text/csv", Data: csv}}})
	info := startUp(t, func(c *config.Config) {
		c.Mail = "gmail"
		c.MailTokenKey = strings.Repeat("5a", 32)
		c.GmailEndpoint = gm.URL
		c.GoogleClientID = google.ClientID
		c.GoogleClientSecret = clientSecret
		c.GoogleRedirectURL = "http://purser.test/v1/mail/callback"
		c.GoogleAuthURL, c.GoogleTokenURL, c.GoogleRevokeURL = google.AuthURL, google.TokenURL, google.RevokeURL
	})
	forbidInLogs(t, clientSecret, access)
	base := "http://" + info.HTTPAddr
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar} // the callback needs the cookie connect set
	get := func(path, token string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}

	status, body := get("/v1/mail/connect", info.DemoToken)
	var consent struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(body, &consent); status != http.StatusOK || err != nil {
		t.Fatalf("connect = %d %s", status, body)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(consent.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	forbidInLogs(t, back.Query().Get("code"), back.Query().Get("state"))
	if status, body := get("/v1/mail/callback?"+back.RawQuery, ""); status != http.StatusOK || !strings.Contains(string(body), `"connected":true`) {
		t.Fatalf("callback = %d %s", status, body)
	}
	forbidInLogs(t, google.RefreshTokens()...)

	c := dial(t, info, info.DemoToken)
	c.send(`{"type":"message","id":"g1","conversation_id":"gmail1","text":"Find my last Visa statement and process it"}`)
	p := c.next(contracts.FrameProposal)
	if p.Proposal.Tool != contracts.ToolFetchEmailAttachments || !strings.Contains(string(p.Proposal.Args), "18c0visa") {
		t.Fatalf("proposal = %+v", p.Proposal)
	}
	if google.Grants("refresh_token") == 0 {
		t.Fatal("the expired access token was not refreshed")
	}

	// The user removes purser at Google: the next refresh is refused.
	google.RevokeAll()
	c.send(`{"type":"message","id":"g2","conversation_id":"gmail2","text":"Find my last Visa statement and process it"}`)
	// The notification and the end of the turn travel different paths:
	// either may come first.
	var n *contracts.Notification
	var end string
	for n == nil || end == "" {
		f := c.nextAny()
		switch f.Type {
		case contracts.FrameNotification:
			n = f.Notification
		case contracts.FrameAnswer:
			end = f.Answer.Content
		case contracts.FrameError:
			end = f.Error.Message
		case contracts.FrameProposal, contracts.FrameClarify:
			t.Fatalf("got a %s frame after Gmail broke", f.Type)
		}
	}
	if n.Kind != contracts.NotifyMailDisconnected || !strings.Contains(n.Body, "/mail") {
		t.Fatalf("notification = %+v", n)
	}
	if !strings.Contains(end, "Gmail") {
		t.Fatalf("the turn ended without saying Gmail is disconnected: %s", end)
	}
	if status, body := get("/v1/mail", info.DemoToken); status != http.StatusOK || !strings.Contains(string(body), `"connected":false`) {
		t.Fatalf("status after the disconnect = %d %s", status, body)
	}

	// Asked again: a clear answer, and no second notification.
	c.send(`{"type":"message","id":"g3","conversation_id":"gmail3","text":"Find my last Visa statement and process it"}`)
	if end := nextEnd(c); !strings.Contains(end, "Gmail") {
		t.Fatalf("second ask ended with %s", end)
	}
	if status, body := get("/v1/notifications", info.DemoToken); status != http.StatusOK || strings.Count(string(body), contracts.NotifyMailDisconnected) != 1 {
		t.Fatalf("inbox = %d %s", status, body)
	}
}

// nextEnd reads frames until the turn ends (answer or error) and returns
// what it said, failing on anything unexpected.
func nextEnd(c *wsClient) string {
	c.t.Helper()
	for {
		f := c.nextAny()
		switch f.Type {
		case contracts.FrameAnswer:
			return f.Answer.Content
		case contracts.FrameError:
			return f.Error.Message
		case contracts.FrameProposal, contracts.FrameClarify:
			c.t.Fatalf("got a %s frame while waiting for the end of a turn", f.Type)
		}
	}
}

// nextAny reads the next frame, failing after 20 s.
func (c *wsClient) nextAny() contracts.ServerFrame {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, data, err := c.conn.Read(ctx)
	if err != nil {
		c.t.Fatalf("waiting for a frame: %v", err)
	}
	var f contracts.ServerFrame
	if err := json.Unmarshal(data, &f); err != nil {
		c.t.Fatalf("server sent bad JSON %q: %v", data, err)
	}
	return f
}

// With the local mailbox there is no Gmail to connect, and purser says so.
func TestGmailConnectWithALocalMailbox(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	req, _ := http.NewRequest(http.MethodGet, "http://"+info.HTTPAddr+"/v1/mail/connect", nil)
	req.Header.Set("Authorization", "Bearer "+info.DemoToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNotImplemented || !strings.Contains(string(body), "PURSER_MAIL=local") {
		t.Fatalf("connect with a local mailbox = %d %s", resp.StatusCode, body)
	}
}
