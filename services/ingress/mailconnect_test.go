package ingress_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/services/toolrunner"
	"github.com/purser-ai/purser/services/toolrunner/mailbox"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/googletest"
)

const (
	mailClientID     = "purser-ingress-test.apps.googleusercontent.com"
	mailClientSecret = "GOCSPX-ingress-test-client-secret"
	mailAccess       = "ya29.ingress-test-access-token"
)

var mailKey = []byte("abcdef0123456789abcdef0123456789")

type mailFixture struct {
	h       *harness
	google  *googletest.Server
	store   *store.Store
	skew    *atomic.Int64 // added to the toolrunner's clock, in seconds
	respond *toolrunner.MailResponder
}

// newMailFixture runs the real toolrunner mail responder, with a fake
// Google, on the harness's NATS server and its own SQLite store.
func newMailFixture(t *testing.T) *mailFixture {
	h := newHarness(t)
	google := googletest.New(t, mailClientID, mailClientSecret, mailAccess)
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	skew := &atomic.Int64{}
	c := &mailbox.Connector{
		OAuth:     mailbox.GoogleOAuth(mailClientID, mailClientSecret, h.srv.URL+"/v1/mail/callback", google.AuthURL, google.TokenURL),
		RevokeURL: google.RevokeURL,
		Tokens:    mailbox.StoredTokens{Store: st, Key: mailKey},
		Now:       func() time.Time { return time.Now().Add(time.Duration(skew.Load()) * time.Second) },
	}
	r, err := toolrunner.RespondMail(natstest.Connect(t, h.ns, "toolrunner"), c, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	h.forbid(mailClientSecret, mailAccess)
	return &mailFixture{h: h, google: google, store: st, skew: skew, respond: r}
}

func decodeJSON[T any](t *testing.T, resp *http.Response) T {
	t.Helper()
	defer resp.Body.Close()
	var v T
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// consentAt plays the browser: it asks for a consent URL with token, keeps
// the cookie that answer sets, consents at the fake Google and returns
// the callback URL Google sends it back to, with the cookie.
func (f *mailFixture) consentAt(t *testing.T, token string) (*url.URL, *http.Cookie) {
	t.Helper()
	resp := f.h.do(call{method: http.MethodGet, path: "/v1/mail/connect", token: token})
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == "purser_mail_state" {
			cookie = c
		}
	}
	got := decodeJSON[struct {
		URL string `json:"url"`
	}](t, resp)
	if !strings.HasPrefix(got.URL, f.google.AuthURL+"?") || strings.Contains(got.URL, mailClientSecret) {
		t.Fatalf("consent URL = %q", got.URL)
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/v1/mail/" {
		t.Fatalf("connect set no strict state cookie: %+v", cookie)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	gresp, err := client.Get(got.URL)
	if err != nil {
		t.Fatal(err)
	}
	gresp.Body.Close()
	back, err := url.Parse(gresp.Header.Get("Location"))
	if err != nil || gresp.StatusCode != http.StatusFound || !strings.HasPrefix(back.String(), f.h.srv.URL+"/v1/mail/callback?") {
		t.Fatalf("consent answered %d, to %q", gresp.StatusCode, gresp.Header.Get("Location"))
	}
	f.h.forbid(back.Query().Get("code"), back.Query().Get("state"))
	return back, cookie
}

// callback is the browser (or client) arriving at path, with what it has.
func (f *mailFixture) callback(t *testing.T, path, token string, cookie *http.Cookie, accept string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.h.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (f *mailFixture) stored(t *testing.T, tenant, user string) bool {
	t.Helper()
	_, err := f.store.GetMailToken(context.Background(), tenant, user)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func callbackPath(code, state string) string {
	return "/v1/mail/callback?" + url.Values{"code": {code}, "state": {state}}.Encode()
}

func TestGmailConnectFlow(t *testing.T) {
	f := newMailFixture(t)
	ann, bob := f.h.token("acme", "ann"), f.h.token("acme", "bob")

	assertError(t, f.h.do(call{method: http.MethodGet, path: "/v1/mail/connect"}), http.StatusUnauthorized, "unauthorized")
	assertError(t, f.h.do(call{method: http.MethodPost, path: "/v1/mail/connect", token: ann}), http.StatusMethodNotAllowed, "method_not_allowed")
	if got := decodeJSON[map[string]bool](t, f.h.do(call{method: http.MethodGet, path: "/v1/mail", token: ann})); got["connected"] {
		t.Fatal("connected before connecting")
	}

	back, annCookie := f.consentAt(t, ann)
	code, state := back.Query().Get("code"), back.Query().Get("state")
	bobBack, bobCookie := f.consentAt(t, bob)
	spare, _ := f.consentAt(t, ann) // a code Google spends on a failed exchange
	spareCode := spare.Query().Get("code")
	sig := strings.LastIndex(state, ".") + 1
	forged := state[:sig] + strings.Repeat("A", len(state)-sig)

	refused := []struct {
		name, path, token string
		cookie            *http.Cookie
		code              string
	}{
		{"forged signature", callbackPath(code, forged), "", annCookie, "bad_state"},
		{"no state", "/v1/mail/callback?code=" + url.QueryEscape(code), "", annCookie, "bad_state"},
		{"no code", "/v1/mail/callback?state=" + url.QueryEscape(state), "", annCookie, "bad_state"},
		{"garbage state", callbackPath(code, "not-a-state"), "", annCookie, "bad_state"},
		{"ann's state, signed in as bob", callbackPath(code, state), bob, nil, "bad_state"},
		// bob sends ann his own consent link: her Gmail must not become his.
		{"bob's link, in ann's browser", bobBack.RequestURI(), "", annCookie, "bad_state"},
		{"ann's link, in a browser that did not start it", back.RequestURI(), "", nil, "bad_state"},
		{"ann's code with bob's state", callbackPath(spareCode, bobBack.Query().Get("state")), "", bobCookie, "bad_code"},
		{"consent refused", "/v1/mail/callback?error=access_denied&state=" + url.QueryEscape(state), "", annCookie, "consent_refused"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			assertError(t, f.callback(t, tt.path, tt.token, tt.cookie, ""), http.StatusBadRequest, tt.code)
		})
	}
	// Expired: the same link, eleven minutes later.
	f.skew.Store(11 * 60)
	assertError(t, f.callback(t, back.RequestURI(), "", annCookie, ""), http.StatusBadRequest, "bad_state")
	f.skew.Store(0)
	if f.stored(t, "acme", "ann") || f.stored(t, "acme", "bob") {
		t.Fatal("a refused callback stored a token")
	}

	// The browser comes back from Google: a page says Gmail is connected.
	resp := f.callback(t, back.RequestURI(), "", annCookie, "text/html,application/xhtml+xml")
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Gmail is connected") {
		t.Fatalf("callback = %d %s", resp.StatusCode, page)
	}
	if resp.Header.Get("Referrer-Policy") != "no-referrer" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("callback page headers: %v", resp.Header)
	}
	if cleared := resp.Cookies(); len(cleared) != 1 || cleared[0].Name != "purser_mail_state" || cleared[0].MaxAge >= 0 {
		t.Fatalf("the state cookie was not cleared: %v", cleared)
	}
	if strings.Contains(string(page), code) || strings.Contains(string(page), state) {
		t.Fatal("the callback page echoes the code or state")
	}
	sealed, err := f.store.GetMailToken(context.Background(), "acme", "ann")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mailbox.Open(mailKey, sealed)
	if err != nil || tok.AccessToken != mailAccess || tok.RefreshToken == "" || strings.Contains(string(sealed), tok.RefreshToken) {
		t.Fatalf("stored token: %v", err)
	}
	if f.stored(t, "acme", "bob") {
		t.Fatal("bob got a token")
	}
	if got := decodeJSON[map[string]bool](t, f.h.do(call{method: http.MethodGet, path: "/v1/mail", token: ann})); !got["connected"] {
		t.Fatal("not connected after the callback")
	}
	// The same link again: Google takes a code once.
	assertError(t, f.callback(t, back.RequestURI(), "", annCookie, ""), http.StatusBadRequest, "bad_code")

	// A client that follows the redirect itself proves who it is with
	// its token instead of the cookie.
	own, _ := f.consentAt(t, ann)
	if got := decodeJSON[map[string]bool](t, f.callback(t, own.RequestURI(), ann, nil, "")); !got["connected"] {
		t.Fatal("an authenticated callback did not connect")
	}
	first := tok.RefreshToken
	sealed, _ = f.store.GetMailToken(context.Background(), "acme", "ann")
	if tok, err = mailbox.Open(mailKey, sealed); err != nil || tok.RefreshToken == first {
		t.Fatalf("the reconnect did not replace the token: %v", err)
	}

	// Revocation: Google is told, and the token is deleted.
	got := decodeJSON[map[string]any](t, f.h.do(call{method: http.MethodDelete, path: "/v1/mail", token: ann}))
	if got["connected"] != false || got["warning"] != nil {
		t.Fatalf("revoke = %v", got)
	}
	// The replaced token was revoked at the reconnect, this one now.
	if revoked := f.google.Revoked(); len(revoked) != 2 || revoked[0] != first || revoked[1] != tok.RefreshToken {
		t.Fatalf("Google was told to revoke %d tokens", len(revoked))
	}
	if f.stored(t, "acme", "ann") {
		t.Fatal("the token is still stored after DELETE /v1/mail")
	}
	assertError(t, f.h.do(call{method: http.MethodPut, path: "/v1/mail", token: ann}), http.StatusMethodNotAllowed, "method_not_allowed")

	// No toolrunner answers: the ingress says so rather than hang.
	f.respond.Close()
	assertError(t, f.h.do(call{method: http.MethodGet, path: "/v1/mail/connect", token: ann}), http.StatusServiceUnavailable, "unavailable")
}

// The Gmail page is static, under the web page's Content-Security-Policy.
func TestGmailPage(t *testing.T) {
	h := newHarness(t)
	for path, want := range map[string]string{"/mail": "Connect Gmail", "/mail.js": "/v1/mail/connect"} {
		resp := h.do(call{method: http.MethodGet, path: path})
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Fatalf("%s = %d, without %q", path, resp.StatusCode, want)
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
			t.Fatalf("%s CSP = %q", path, csp)
		}
	}
	h.do(call{method: http.MethodGet, path: "/v1/mail"}).Body.Close() // a refused request logs at debug level
}
