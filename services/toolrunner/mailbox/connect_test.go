package mailbox

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/gmailtest"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/googletest"
)

const (
	clientID     = "purser-test.apps.googleusercontent.com"
	clientSecret = "GOCSPX-test-client-secret"
	redirectURL  = "https://purser.example/v1/mail/callback"
	freshToken   = "ya29.fresh-access-token-after-refresh"
	staleToken   = "ya29.stale-access-token-expired"
	refreshToken = "1//refresh-token-of-ann"
)

// disconnects records what StoredTokens.Disconnected is told.
type disconnects struct {
	mu   sync.Mutex
	ids  []string
	fail error
}

func (d *disconnects) report(_ context.Context, tenant, user, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	d.ids = append(d.ids, tenant+"/"+user+"/"+id)
	return nil
}

func (d *disconnects) got() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.ids...)
}

type oauthFixture struct {
	google *googletest.Server
	gmail  *gmailtest.Server
	store  *store.Store
	tokens StoredTokens
	told   *disconnects
	g      Gmail
}

func newOAuthFixture(t *testing.T) *oauthFixture {
	google := googletest.New(t, clientID, clientSecret, freshToken)
	gm := gmailtest.New(t, freshToken, gmailtest.Message{ID: "18c0visa", From: "statements@northbank.example", Subject: "Your Visa statement",
		Date: time.Now().AddDate(0, 0, -3), Attachments: []gmailtest.Attachment{{Name: "visa.csv", MediaType: "text/csv", Data: []byte("Date,Amount\n")}}})
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	told := &disconnects{}
	tokens := StoredTokens{Store: st, Key: tokenKey, OAuth: GoogleOAuth(clientID, clientSecret, redirectURL, google.AuthURL, google.TokenURL), Disconnected: told.report}
	return &oauthFixture{google: google, gmail: gm, store: st, tokens: tokens, told: told, g: Gmail{Tokens: tokens, Endpoint: gm.URL}}
}

// putExpired stores an expired access token with a refresh token.
func (f *oauthFixture) putExpired(t *testing.T, user string) []byte {
	t.Helper()
	ctx := context.Background()
	if err := f.tokens.Put(ctx, "acme", user, &oauth2.Token{AccessToken: staleToken, RefreshToken: refreshToken, TokenType: "Bearer", Expiry: time.Now().Add(-time.Minute)}); err != nil {
		t.Fatal(err)
	}
	sealed, err := f.store.GetMailToken(ctx, "acme", user)
	if err != nil {
		t.Fatal(err)
	}
	return sealed
}

func TestExpiredTokenIsRefreshedAndSealedBack(t *testing.T) {
	f := newOAuthFixture(t)
	f.google.AddRefreshToken(refreshToken)
	before := f.putExpired(t, "ann")
	ctx := context.Background()

	found, err := f.g.Search(ctx, "acme", "ann", "visa statement", 90, 5, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].ID != "18c0visa" {
		t.Fatalf("search = %+v", found)
	}
	if got := f.google.Grants("refresh_token"); got != 1 {
		t.Fatalf("refresh grants = %d, want 1", got)
	}
	after, err := f.store.GetMailToken(ctx, "acme", "ann")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(before, after) {
		t.Fatal("the stored ciphertext did not change after a refresh")
	}
	if bytes.Contains(after, []byte(freshToken)) || bytes.Contains(after, []byte(refreshToken)) {
		t.Fatal("the refreshed token is stored in clear")
	}
	tok, err := Open(tokenKey, after)
	if err != nil {
		t.Fatal(err)
	}
	if tok.AccessToken != freshToken || tok.RefreshToken != refreshToken || !tok.Expiry.After(time.Now().Add(30*time.Minute)) {
		t.Fatalf("stored token after refresh: access %q, refresh kept %v, expiry %v", tok.AccessToken, tok.RefreshToken == refreshToken, tok.Expiry)
	}

	// The refreshed token is valid now: the next call does not refresh.
	if _, err := f.g.Fetch(ctx, "acme", "ann", "18c0visa"); err != nil {
		t.Fatal(err)
	}
	if got := f.google.Grants("refresh_token"); got != 1 {
		t.Fatalf("refresh grants after a second call = %d, want still 1", got)
	}
	if len(f.told.got()) != 0 {
		t.Fatalf("a working refresh reported a disconnect: %v", f.told.got())
	}
}

// A refresh never overwrites a token stored meanwhile (a reconnect).
func TestRefreshKeepsATokenStoredMeanwhile(t *testing.T) {
	f := newOAuthFixture(t)
	f.google.AddRefreshToken(refreshToken)
	f.putExpired(t, "ann")
	ctx := context.Background()
	src, err := f.tokens.TokenSource(ctx, "acme", "ann")
	if err != nil {
		t.Fatal(err)
	}
	reconnected := &oauth2.Token{AccessToken: "ya29.reconnected", RefreshToken: "1//new", Expiry: time.Now().Add(time.Hour)}
	if err := f.tokens.Put(ctx, "acme", "ann", reconnected); err != nil {
		t.Fatal(err)
	}
	tok, err := src.Token()
	if err != nil || tok.AccessToken != freshToken {
		t.Fatalf("refresh = %v, %v", tok, err)
	}
	stored, err := f.tokens.Token(ctx, "acme", "ann")
	if err != nil || stored.AccessToken != "ya29.reconnected" {
		t.Fatalf("stored = %+v, %v; want the reconnected token", stored, err)
	}
}

func TestRefusedRefreshTokenDisconnectsOnce(t *testing.T) {
	f := newOAuthFixture(t)
	f.google.AddRefreshToken(refreshToken)
	f.google.Revoke(refreshToken) // the user removed purser at Google
	f.putExpired(t, "ann")
	ctx := context.Background()

	_, err := f.g.Search(ctx, "acme", "ann", "visa statement", 90, 5, time.Now())
	var te *toolrunner.ToolError
	if !errors.Is(err, ErrNoMailAccess) || !errors.As(err, &te) || te.Code != contracts.CodeMailNotConnected || !strings.Contains(te.Message, "Connect Gmail again") {
		t.Fatalf("search with a refused refresh token: %v", err)
	}
	for _, secret := range []string{refreshToken, staleToken, clientSecret} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("the error quotes a secret: %v", err)
		}
	}
	if got := f.told.got(); len(got) != 1 || !strings.HasPrefix(got[0], "acme/ann/mail-") {
		t.Fatalf("disconnects told = %v, want one for acme/ann", got)
	}
	if _, err := f.store.GetMailToken(ctx, "acme", "ann"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the broken token is still stored: %v", err)
	}
	if len(f.gmail.Requests()) != 0 {
		t.Fatalf("Gmail was called without a token: %v", f.gmail.Requests())
	}

	// Asked again: not connected, and nobody is told a second time.
	_, err = f.g.Fetch(ctx, "acme", "ann", "18c0visa")
	if !errors.As(err, &te) || te.Code != contracts.CodeMailNotConnected || !strings.Contains(te.Message, "not connected") {
		t.Fatalf("fetch after the disconnect: %v", err)
	}
	if got := f.told.got(); len(got) != 1 {
		t.Fatalf("disconnects told = %v, want still one", got)
	}
}

// When the user cannot be told, the token stays, so the next call tells.
func TestUntoldDisconnectKeepsTheToken(t *testing.T) {
	f := newOAuthFixture(t)
	f.putExpired(t, "ann") // the fake Google does not know the refresh token
	f.told.fail = errors.New("bus down")
	ctx := context.Background()
	if _, err := f.g.Search(ctx, "acme", "ann", "visa", 90, 5, time.Now()); err == nil || errors.Is(err, ErrNoMailAccess) {
		t.Fatalf("search while the report fails: %v", err)
	}
	if _, err := f.store.GetMailToken(ctx, "acme", "ann"); err != nil {
		t.Fatalf("the token was dropped without telling the user: %v", err)
	}
	f.told.fail = nil
	if _, err := f.g.Search(ctx, "acme", "ann", "visa", 90, 5, time.Now()); !errors.Is(err, ErrNoMailAccess) {
		t.Fatalf("search after the bus is back: %v", err)
	}
	if got := f.told.got(); len(got) != 1 {
		t.Fatalf("disconnects told = %v, want one", got)
	}
}

func (f *oauthFixture) connector(now func() time.Time) *Connector {
	return &Connector{OAuth: f.tokens.OAuth, RevokeURL: f.google.RevokeURL, Tokens: f.tokens, Now: now}
}

// consent plays the user's browser at the fake Google: it opens the
// consent URL and returns the code and state Google sends back.
func consent(t *testing.T, consentURL string) (code, state string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(consentURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("consent page answered %d", resp.StatusCode)
	}
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(back.String(), redirectURL+"?") {
		t.Fatalf("consent redirected to %q", resp.Header.Get("Location"))
	}
	return back.Query().Get("code"), back.Query().Get("state")
}

func mailCode(err error) string {
	var me *contracts.MailError
	if errors.As(err, &me) {
		return me.Code
	}
	return ""
}

func TestConnectThroughConsent(t *testing.T) {
	f := newOAuthFixture(t)
	now := time.Now()
	c := f.connector(func() time.Time { return now })
	ctx := context.Background()

	u, err := c.ConsentURL(ctx, "acme", "ann")
	if err != nil {
		t.Fatal(err)
	}
	q := mustParse(t, u).Query()
	for k, want := range map[string]string{"client_id": clientID, "redirect_uri": redirectURL, "scope": Scope, "access_type": "offline",
		"prompt": "consent", "response_type": "code", "code_challenge_method": "S256"} {
		if q.Get(k) != want {
			t.Errorf("consent URL %s = %q, want %q", k, q.Get(k), want)
		}
	}
	if strings.Contains(u, clientSecret) {
		t.Fatal("the consent URL holds the client secret")
	}
	code, state := consent(t, u)

	// Another user's, forged, tampered and expired states are refused,
	// and nothing is stored.
	other, _ := c.ConsentURL(ctx, "acme", "bob")
	_, bobState := consent(t, other)
	forged := strings.Replace(state, state[:4], "AAAA", 1)
	late := f.connector(func() time.Time { return now.Add(11 * time.Minute) })
	tests := []struct {
		name string
		c    *Connector
		user string
		give string
	}{
		{"bob's state for ann", c, "ann", bobState},
		{"ann's state for bob", c, "bob", state},
		{"forged", c, "ann", forged},
		{"no signature", c, "ann", strings.Split(state, ".")[0]},
		{"signed by another key", &Connector{OAuth: c.OAuth, Tokens: StoredTokens{Store: f.store, Key: []byte(strings.Repeat("k", 32))}}, "ann", state},
		{"expired", late, "ann", state},
		{"empty", c, "ann", ""},
	}
	for _, tt := range tests {
		if err := tt.c.Connect(ctx, "acme", tt.user, code, tt.give); mailCode(err) != contracts.MailBadState {
			t.Errorf("%s: Connect = %v, want %s", tt.name, err, contracts.MailBadState)
		}
	}
	for _, user := range []string{"ann", "bob"} {
		if ok, err := c.Connected(ctx, "acme", user); ok || err != nil {
			t.Fatalf("%s connected by a refused state: %v, %v", user, ok, err)
		}
	}
	if f.google.Grants("authorization_code") != 0 {
		t.Fatal("a refused state reached the token endpoint")
	}

	if err := c.Connect(ctx, "acme", "ann", code, state); err != nil {
		t.Fatal(err)
	}
	tok, err := f.tokens.Token(ctx, "acme", "ann")
	if err != nil || tok.AccessToken != freshToken || !strings.HasPrefix(tok.RefreshToken, "1//refresh-") {
		t.Fatalf("stored token = %+v, %v", tok, err)
	}
	if ok, err := c.Connected(ctx, "acme", "ann"); !ok || err != nil {
		t.Fatalf("Connected = %v, %v", ok, err)
	}
	// The code is good once.
	if err := c.Connect(ctx, "acme", "ann", code, state); mailCode(err) != contracts.MailBadCode {
		t.Fatalf("reused code: %v", err)
	}
	// A code needs the state it was issued with (PKCE).
	u2, _ := c.ConsentURL(ctx, "acme", "ann")
	code2, _ := consent(t, u2)
	if err := c.Connect(ctx, "acme", "ann", code2, state); mailCode(err) != contracts.MailBadCode {
		t.Fatalf("a code with another state's verifier: %v", err)
	}

	// Connecting again replaces the token and revokes the one replaced.
	u3, _ := c.ConsentURL(ctx, "acme", "ann")
	code3, state3 := consent(t, u3)
	if err := c.Connect(ctx, "acme", "ann", code3, state3); err != nil {
		t.Fatal(err)
	}
	if got := f.google.Revoked(); len(got) != 1 || got[0] != tok.RefreshToken {
		t.Fatalf("reconnect revoked %d tokens, want the replaced refresh token", len(got))
	}
	tok, err = f.tokens.Token(ctx, "acme", "ann")
	if err != nil {
		t.Fatal(err)
	}
	// Google answers a reconnect without a refresh token: the one it gave
	// before is kept, and not revoked.
	f.google.OmitRefreshTokens(true)
	u4, _ := c.ConsentURL(ctx, "acme", "ann")
	code4, state4 := consent(t, u4)
	if err := c.Connect(ctx, "acme", "ann", code4, state4); err != nil {
		t.Fatal(err)
	}
	f.google.OmitRefreshTokens(false)
	kept, err := f.tokens.Token(ctx, "acme", "ann")
	if err != nil {
		t.Fatal(err)
	}
	if kept.RefreshToken != tok.RefreshToken || len(f.google.Revoked()) != 1 {
		t.Fatalf("reconnect without a refresh token: refresh token kept %v; %d revoked", kept.RefreshToken == tok.RefreshToken, len(f.google.Revoked()))
	}

	// Disconnect revokes the refresh token at Google and deletes it.
	warning, err := c.Disconnect(ctx, "acme", "ann")
	if err != nil || warning != "" {
		t.Fatalf("Disconnect = %q, %v", warning, err)
	}
	if got := f.google.Revoked(); len(got) != 2 || got[1] != tok.RefreshToken {
		t.Fatalf("revoked %d tokens, want the refresh token", len(got))
	}
	if ok, _ := c.Connected(ctx, "acme", "ann"); ok {
		t.Fatal("still connected after Disconnect")
	}
	if warning, err := c.Disconnect(ctx, "acme", "ann"); err != nil || warning != "" || len(f.google.Revoked()) != 2 {
		t.Fatalf("second Disconnect = %q, %v", warning, err)
	}
}

func TestDisconnectWithGoogleUnreachableStillForgets(t *testing.T) {
	f := newOAuthFixture(t)
	f.google.AddRefreshToken(refreshToken)
	f.putExpired(t, "ann")
	c := f.connector(nil)
	c.RevokeURL = "http://127.0.0.1:1/revoke"
	warning, err := c.Disconnect(context.Background(), "acme", "ann")
	if err != nil || !strings.Contains(warning, "myaccount.google.com/permissions") || strings.Contains(warning, refreshToken) {
		t.Fatalf("Disconnect = %q, %v", warning, err)
	}
	if ok, _ := c.Connected(context.Background(), "acme", "ann"); ok {
		t.Fatal("still connected")
	}
}

func TestConnectWithoutAClientSaysSo(t *testing.T) {
	f := newOAuthFixture(t)
	c := &Connector{Tokens: f.tokens}
	if _, err := c.ConsentURL(context.Background(), "acme", "ann"); mailCode(err) != contracts.MailNotConfigured || !strings.Contains(err.Error(), "PURSER_GOOGLE_CLIENT_ID") {
		t.Fatalf("ConsentURL without a client: %v", err)
	}
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
