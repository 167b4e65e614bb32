package mailbox

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// Connector connects a user's Gmail through Google's OAuth consent: it
// builds the consent URL, exchanges the code Google sends back for a token
// and seals it into the store, and disconnects. It holds the OAuth client
// secret and the sealing key; the ingress, which relays the requests,
// holds neither.
//
// The state in a consent URL binds tenant, user, a random nonce and an
// expiry under an HMAC keyed from the sealing key: a state cannot be made
// for another user, altered or used after it expires. The PKCE verifier is
// derived from the state, so a code is useless without its state. A state
// is not single-use: within its lifetime it can carry another code for
// the same user, whose own consent that code needed.
type Connector struct {
	// OAuth is the Google client: id, secret, redirect URL and endpoints.
	OAuth *oauth2.Config
	// RevokeURL, when set, is told to revoke a token on disconnect.
	RevokeURL string
	// Tokens stores the sealed tokens; its Key also keys the state.
	Tokens StoredTokens
	// HTTPClient reaches Google. Default: a 30 s timeout.
	HTTPClient *http.Client
	// StateTTL is how long a consent URL may be used. Default 10 minutes.
	StateTTL time.Duration
	// Now and Rand are the clock and the nonce source. Defaults: time.Now
	// and crypto/rand.
	Now  func() time.Time
	Rand io.Reader
}

var _ toolrunner.MailAccounts = (*Connector)(nil)

func mailErr(code, msg string) error { return &contracts.MailError{Code: code, Message: msg} }

// GoogleOAuth is the OAuth client for Google's endpoints (authURL and
// tokenURL are overridden in tests), asking for gmail.readonly.
func GoogleOAuth(clientID, clientSecret, redirectURL, authURL, tokenURL string) *oauth2.Config {
	return &oauth2.Config{ClientID: clientID, ClientSecret: clientSecret, RedirectURL: redirectURL, Scopes: []string{Scope},
		Endpoint: oauth2.Endpoint{AuthURL: authURL, TokenURL: tokenURL, AuthStyle: oauth2.AuthStyleInParams}}
}

var errNotConfigured = mailErr(contracts.MailNotConfigured,
	"This server has no Google OAuth client (PURSER_GOOGLE_CLIENT_ID), so Gmail cannot be connected here; an operator can store a token with purser mail-token.")

func (c *Connector) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Connector) client(ctx context.Context) context.Context {
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

// mac signs msg under a key derived from the sealing key for purpose.
func (c *Connector) mac(purpose, msg string) []byte {
	k := hmac.New(sha256.New, c.Tokens.Key)
	k.Write([]byte("purser gmail oauth " + purpose))
	m := hmac.New(sha256.New, k.Sum(nil))
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// verifier is the PKCE code verifier of a state: 43 URL-safe characters.
func (c *Connector) verifier(st string) string {
	return base64.RawURLEncoding.EncodeToString(c.mac("pkce", st))
}

// ConsentURL returns the Google consent URL that connects the user's Gmail,
// read-only, with offline access (a refresh token).
func (c *Connector) ConsentURL(_ context.Context, tenant, user string) (string, error) {
	if c.OAuth == nil {
		return "", errNotConfigured
	}
	rnd := c.Rand
	if rnd == nil {
		rnd = rand.Reader
	}
	nonce := make([]byte, 16)
	if _, err := io.ReadFull(rnd, nonce); err != nil {
		return "", fmt.Errorf("state nonce: %w", err)
	}
	ttl := c.StateTTL
	if ttl == 0 {
		ttl = 10 * time.Minute
	}
	body, err := contracts.MailState{Tenant: tenant, User: user, Nonce: base64.RawURLEncoding.EncodeToString(nonce), Expires: c.now().Add(ttl).Unix()}.Encode()
	if err != nil {
		return "", err
	}
	st := body + "." + base64.RawURLEncoding.EncodeToString(c.mac("state", body))
	return c.OAuth.AuthCodeURL(st, oauth2.AccessTypeOffline, oauth2.ApprovalForce, oauth2.S256ChallengeOption(c.verifier(st))), nil
}

// checkState refuses a state that is not signed by this server, has
// expired, or was made for another tenant or user.
func (c *Connector) checkState(st, tenant, user string) error {
	bad := mailErr(contracts.MailBadState, "This Gmail connection link is not valid for you, or has expired. Start again from Connect Gmail.")
	s, body, sig, err := contracts.ParseMailState(st)
	if err != nil {
		return bad
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, c.mac("state", body)) {
		return bad
	}
	if s.Tenant != tenant || s.User != user || !c.now().Before(time.Unix(s.Expires, 0)) {
		return bad
	}
	return nil
}

// Connect checks the state, exchanges the code Google sent back and
// stores the token sealed, replacing any earlier one.
func (c *Connector) Connect(ctx context.Context, tenant, user, code, st string) error {
	if c.OAuth == nil {
		return errNotConfigured
	}
	if err := c.checkState(st, tenant, user); err != nil {
		return err
	}
	if code == "" {
		return mailErr(contracts.MailBadRequest, "Google sent no code back.")
	}
	tok, err := c.OAuth.Exchange(c.client(ctx), code, oauth2.VerifierOption(c.verifier(st)))
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_request"):
		return mailErr(contracts.MailBadCode, "Google did not accept this sign-in (it may have been used already or expired). Start again from Connect Gmail.")
	case err != nil:
		// Never quoted: the request carries the client secret.
		return mailErr(contracts.MailUnavailable, "Google's sign-in service did not answer; try again.")
	}
	if scope, _ := tok.Extra("scope").(string); scope != "" && !strings.Contains(" "+scope+" ", " "+Scope+" ") {
		return mailErr(contracts.MailBadCode, "Read access to Gmail was not granted. Start again from Connect Gmail and allow it.")
	}
	prev, _, _ := c.Tokens.load(ctx, tenant, user)
	if tok.RefreshToken == "" && prev != nil {
		// Google sent no new refresh token: the one it gave before
		// still stands for this grant.
		tok.RefreshToken = prev.RefreshToken
	}
	if err := c.Tokens.Put(ctx, tenant, user, tok); err != nil {
		return fmt.Errorf("store mail token: %w", err)
	}
	// A reconnect replaces the token: the one it replaces is revoked, so
	// that no forgotten grant stays valid at Google.
	if prev != nil && prev.RefreshToken != "" && prev.RefreshToken != tok.RefreshToken && c.RevokeURL != "" {
		_ = c.revoke(ctx, &oauth2.Token{RefreshToken: prev.RefreshToken})
	}
	return nil
}

// Connected reports whether a token is stored for the user.
func (c *Connector) Connected(ctx context.Context, tenant, user string) (bool, error) {
	_, err := c.Tokens.Store.GetMailToken(ctx, tenant, user)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Disconnect asks Google to revoke the user's token (when RevokeURL is
// set) and deletes it. The token is deleted even if Google cannot be
// reached; warning then says so.
func (c *Connector) Disconnect(ctx context.Context, tenant, user string) (warning string, err error) {
	tok, _, err := c.Tokens.load(ctx, tenant, user)
	if errors.Is(err, ErrNoMailAccess) {
		return "", nil
	}
	if err == nil && c.RevokeURL != "" {
		warning = c.revoke(ctx, tok)
	}
	// A token that cannot be opened (the key changed) is deleted too.
	if _, err := c.Tokens.Store.DeleteMailToken(ctx, tenant, user); err != nil {
		return "", fmt.Errorf("delete mail token: %w", err)
	}
	return warning, nil
}

// revoke asks Google to revoke tok (the refresh token, which takes its
// access tokens with it) and returns a warning when it could not.
func (c *Connector) revoke(ctx context.Context, tok *oauth2.Token) string {
	t := tok.RefreshToken
	if t == "" {
		t = tok.AccessToken
	}
	if t == "" {
		return ""
	}
	const warn = "purser deleted its Gmail access, but Google could not be told to revoke it; remove purser at https://myaccount.google.com/permissions"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.RevokeURL, strings.NewReader(url.Values{"token": {t}}.Encode()))
	if err != nil {
		return warn
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return warn
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	// 400 is Google's answer for a token already revoked or expired.
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusBadRequest {
		return warn
	}
	return ""
}
