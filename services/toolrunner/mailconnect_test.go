package toolrunner_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/oauth2"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
	gmail "github.com/purser-ai/purser/services/toolrunner/mailbox"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/gmailtest"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/googletest"
)

const (
	gClientID     = "purser-test.apps.googleusercontent.com"
	gClientSecret = "GOCSPX-toolrunner-test-secret"
	gRedirect     = "https://purser.example/v1/mail/callback"
	gAccess       = "ya29.access-issued-by-fake-google"
)

var sealKey = []byte("0123456789abcdef0123456789abcdef")

// lateTokens lets the Gmail adapter be built before the system's store.
type lateTokens struct{ gmail.StoredTokens }

func (l *lateTokens) TokenSource(ctx context.Context, tenant, user string) (oauth2.TokenSource, error) {
	return l.StoredTokens.TokenSource(ctx, tenant, user)
}

type mailSystem struct {
	*systest.System
	google    *googletest.Server
	tokens    gmail.StoredTokens
	connector *gmail.Connector
}

// startMail runs a toolrunner with the Gmail tools over gmailtest, a fake
// Google, and the mail responder, on real NATS and SQLite.
func startMail(t *testing.T) *mailSystem {
	google := googletest.New(t, gClientID, gClientSecret, gAccess)
	gm := gmailtest.New(t, gAccess, gmailtest.Message{ID: "18c0visa", From: "statements@northbank.example", Subject: "Your Visa statement",
		Date: now.AddDate(0, 0, -3), Attachments: []gmailtest.Attachment{{Name: "visa.csv", MediaType: "text/csv", Data: []byte("Date,Amount\n")}}})
	late := &lateTokens{}
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Toolrunners: 1, Now: clock, Mail: gmail.Gmail{Tokens: late, Endpoint: gm.URL}})
	late.StoredTokens = gmail.StoredTokens{Store: s.Store, Key: sealKey,
		OAuth:        gmail.GoogleOAuth(gClientID, gClientSecret, gRedirect, google.AuthURL, google.TokenURL),
		Disconnected: toolrunner.MailDisconnected(s.Pub, clock)}
	c := &gmail.Connector{OAuth: late.OAuth, RevokeURL: google.RevokeURL, Tokens: late.StoredTokens}
	r, err := toolrunner.RespondMail(s.NC, c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return &mailSystem{System: s, google: google, tokens: late.StoredTokens, connector: c}
}

// ask sends a mail request over NATS as the ingress does.
func (m *mailSystem) ask(t *testing.T, op, tenant, user string, req contracts.MailRequest) contracts.MailReply {
	t.Helper()
	subject, err := bus.MailSubject(op, tenant, user)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(req)
	msg, err := m.NC.Request(subject, body, 10*time.Second)
	if err != nil {
		t.Fatalf("%s request: %v", op, err)
	}
	var reply contracts.MailReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		t.Fatal(err)
	}
	return reply
}

func TestMailConnectOverNATS(t *testing.T) {
	m := startMail(t)
	ctx := context.Background()

	got := m.ask(t, contracts.MailOpStatus, "acme", "ann", contracts.MailRequest{})
	if got.Connected || got.Error != nil {
		t.Fatalf("status before connecting = %+v", got)
	}
	got = m.ask(t, contracts.MailOpConnect, "acme", "ann", contracts.MailRequest{})
	if got.Error != nil || !strings.HasPrefix(got.URL, m.google.AuthURL+"?") {
		t.Fatalf("connect = %+v", got)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(got.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	code, state := back.Query().Get("code"), back.Query().Get("state")

	// The state names ann: asked on bob's subject, it is refused.
	if got := m.ask(t, contracts.MailOpCallback, "acme", "bob", contracts.MailRequest{Code: code, State: state}); got.Error == nil || got.Error.Code != contracts.MailBadState {
		t.Fatalf("ann's state on bob's subject = %+v", got)
	}
	if got := m.ask(t, contracts.MailOpCallback, "acme", "ann", contracts.MailRequest{Code: code, State: state}); got.Error != nil || !got.Connected {
		t.Fatalf("callback = %+v", got)
	}
	sealed, err := m.Store.GetMailToken(ctx, "acme", "ann")
	if err != nil || strings.Contains(string(sealed), gAccess) {
		t.Fatalf("stored token: %v (or in clear)", err)
	}
	if _, err := m.Store.GetMailToken(ctx, "acme", "bob"); err == nil {
		t.Fatal("a token was stored for bob")
	}

	// The tool reads ann's Gmail with the connected token.
	m.SendToolRequest(request("acme", "ann", "c1", contracts.ToolSearchGmail, `{"query":"visa statement"}`))
	if res := m.Result("acme", "conv-ann", "c1"); !res.OK || !strings.Contains(string(res.Data), "18c0visa") {
		t.Fatalf("search after connecting = %+v", res)
	}

	// Revocation: Google is told, the token is gone, the tool says so.
	if got := m.ask(t, contracts.MailOpRevoke, "acme", "ann", contracts.MailRequest{}); got.Error != nil || got.Connected || got.Warning != "" {
		t.Fatalf("revoke = %+v", got)
	}
	if len(m.google.Revoked()) != 1 {
		t.Fatalf("Google was told to revoke %d tokens, want 1", len(m.google.Revoked()))
	}
	if _, err := m.Store.GetMailToken(ctx, "acme", "ann"); err == nil {
		t.Fatal("the token is still stored after revocation")
	}
	m.SendToolRequest(request("acme", "ann", "c2", contracts.ToolSearchGmail, `{"query":"visa statement"}`))
	if res := m.Result("acme", "conv-ann", "c2"); res.OK || res.Error.Code != contracts.CodeMailNotConnected {
		t.Fatalf("search after revocation = %+v", res)
	}

	// Unknown ops and malformed bodies are refused.
	if msg, err := m.NC.Request("purser.mail.steal.acme.ann", nil, 10*time.Second); err != nil || !strings.Contains(string(msg.Data), contracts.MailBadRequest) {
		t.Fatalf("unknown op: %v %s", err, msgData(msg))
	}
	if msg, err := m.NC.Request("purser.mail.callback.acme.ann", []byte(`{"code":"x","tenant":"other"}`), 10*time.Second); err != nil || !strings.Contains(string(msg.Data), contracts.MailBadRequest) {
		t.Fatalf("unknown field: %v %s", err, msgData(msg))
	}
}

func msgData(m *nats.Msg) string {
	if m == nil {
		return ""
	}
	return string(m.Data)
}

// A refresh token Google refuses: the tool answers clearly, and the user
// gets one mail_disconnected notification, however often they ask.
func TestBrokenGmailConnectionNotifiesOnce(t *testing.T) {
	m := startMail(t)
	const rt = "1//refresh-revoked-at-google"
	m.google.AddRefreshToken(rt)
	m.google.Revoke(rt)
	if err := m.tokens.Put(context.Background(), "acme", "ann", &oauth2.Token{AccessToken: "ya29.expired", RefreshToken: rt, Expiry: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	isNotify := func(msg systest.Msg) bool { return msg.Subject == "purser.notify.acme.ann" }

	m.SendToolRequest(request("acme", "ann", "c1", contracts.ToolSearchGmail, `{"query":"visa statement"}`))
	res := m.Result("acme", "conv-ann", "c1")
	if res.OK || res.Error.Code != contracts.CodeMailNotConnected || !strings.Contains(res.Error.Message, "Connect Gmail again") {
		t.Fatalf("search with a broken connection = %+v", res.Error)
	}
	msgs := m.Bus.WaitN(1, isNotify)
	var n contracts.Notification
	if err := contracts.Decode(msgs[0].Data, &n); err != nil {
		t.Fatalf("notification does not decode: %v", err)
	}
	if n.Kind != contracts.NotifyMailDisconnected || !strings.Contains(n.Body, "Connect Gmail again") || msgs[0].Type != contracts.TypeNotification {
		t.Fatalf("notification = %+v", n)
	}
	if strings.Contains(string(msgs[0].Data), rt) {
		t.Fatal("the notification holds the refresh token")
	}

	m.SendToolRequest(request("acme", "ann", "c3", contracts.ToolSearchGmail, `{"query":"visa"}`))
	if res := m.Result("acme", "conv-ann", "c3"); res.OK || res.Error.Code != contracts.CodeMailNotConnected {
		t.Fatalf("search after the disconnect = %+v", res)
	}
	// A notification is published, and stored, before the result that
	// follows it, and one watch sees both in order: a second notification
	// would be here by now.
	if got := m.Bus.All(isNotify); len(got) != 1 {
		t.Fatalf("%d notifications, want 1", len(got))
	}
}
