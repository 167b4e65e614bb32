package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	secret = []byte("0123456789abcdef0123456789abcdef")
	now    = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
)

func clock() time.Time { return now }

func sign(t *testing.T, method jwt.SigningMethod, key any, mutate func(*claims), header map[string]any) string {
	t.Helper()
	c := claims{Tenant: "acme", Roles: []string{"member"}, RegisteredClaims: jwt.RegisteredClaims{
		Subject: "ann", Issuer: "purser", Audience: jwt.ClaimStrings{"purser"}, ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}}
	if mutate != nil {
		mutate(&c)
	}
	tok := jwt.NewWithClaims(method, c)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestHS256(t *testing.T) {
	v, err := NewVerifier(Config{Secret: secret, Issuer: "purser", Audience: "purser", Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	// alg none, crafted by hand.
	enc := base64.RawURLEncoding.EncodeToString
	body, _ := json.Marshal(map[string]any{"sub": "ann", "tenant": "acme", "roles": []string{"owner"}, "iss": "purser", "aud": "purser", "exp": now.Add(time.Hour).Unix()})
	none := enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(body) + "."
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"valid", sign(t, jwt.SigningMethodHS256, secret, nil, nil), nil},
		{"missing", "", ErrMissingToken},
		{"expired", sign(t, jwt.SigningMethodHS256, secret, func(c *claims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Minute)) }, nil), ErrExpired},
		{"no expiry", sign(t, jwt.SigningMethodHS256, secret, func(c *claims) { c.ExpiresAt = nil }, nil), ErrBadClaims},
		{"not yet valid", sign(t, jwt.SigningMethodHS256, secret, func(c *claims) { c.NotBefore = jwt.NewNumericDate(now.Add(time.Hour)) }, nil), ErrBadClaims},
		{"bad signature", sign(t, jwt.SigningMethodHS256, []byte("another-secret-another-secret-xx"), nil, nil), ErrBadSignature},
		{"alg none", none, ErrBadAlgorithm},
		{"HS512 with the right secret", sign(t, jwt.SigningMethodHS512, secret, nil, nil), ErrBadAlgorithm},
		{"wrong issuer", sign(t, jwt.SigningMethodHS256, secret, func(c *claims) { c.Issuer = "evil" }, nil), ErrBadClaims},
		{"wrong audience", sign(t, jwt.SigningMethodHS256, secret, func(c *claims) { c.Audience = jwt.ClaimStrings{"other"} }, nil), ErrBadClaims},
		{"tenant with a dot", sign(t, jwt.SigningMethodHS256, secret, func(c *claims) { c.Tenant = "a.b" }, nil), ErrBadClaims},
		{"user with a star", sign(t, jwt.SigningMethodHS256, secret, func(c *claims) { c.Subject = "*" }, nil), ErrBadClaims},
		{"unknown role", sign(t, jwt.SigningMethodHS256, secret, func(c *claims) { c.Roles = []string{"admin"} }, nil), ErrBadClaims},
		{"no roles", sign(t, jwt.SigningMethodHS256, secret, func(c *claims) { c.Roles = nil }, nil), ErrBadClaims},
		{"garbage", "abc.def.ghi", ErrBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tt.token)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify() error = %v, want %v", err, tt.want)
			}
			if err == nil && (p.TenantID != "acme" || p.UserID != "ann" || !p.CanWrite()) {
				t.Fatalf("principal = %+v", p)
			}
			if err != nil && tt.token != "" && strings.Contains(err.Error(), tt.token) {
				t.Fatal("error quotes the token")
			}
		})
	}
}

func TestMintRoundTrip(t *testing.T) {
	m := NewMinter(secret, "purser", "purser", clock)
	tok, err := m.Mint("demo", "demo", []Role{RoleViewer}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := NewVerifier(Config{Secret: secret, Issuer: "purser", Audience: "purser", Now: clock})
	p, err := v.Verify(context.Background(), tok)
	if err != nil || p.CanWrite() || !p.ExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("principal = %+v, %v", p, err)
	}
	if _, err := m.Mint("a.b", "u", []Role{RoleOwner}, time.Hour); err == nil {
		t.Error("minted a token for a bad tenant id")
	}
}

func TestJWKS(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	var fetches atomic.Int32
	var down atomic.Bool
	current := map[string]*rsa.PublicKey{"k1": &key.PublicKey}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if down.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		var keys []map[string]string
		for kid, k := range current {
			keys = append(keys, map[string]string{"kty": "RSA", "kid": kid, "use": "sig",
				"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
	}))
	defer srv.Close()
	tnow := now
	v, err := NewVerifier(Config{JWKSURL: srv.URL, Issuer: "purser", Audience: "purser", Now: func() time.Time { return tnow }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, key, nil, map[string]any{"kid": "k1"})); err != nil {
		t.Fatalf("valid RS256: %v", err)
	}
	// HS256 signed with the public key as an HMAC secret: the classic confusion.
	pub := key.PublicKey.N.Bytes()
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodHS256, pub, nil, map[string]any{"kid": "k1"})); !errors.Is(err, ErrBadAlgorithm) {
		t.Fatalf("HS256 with the public key: %v", err)
	}
	// A rotated key: an unknown kid triggers one refresh.
	current["k2"] = &other.PublicKey
	tnow = now.Add(time.Minute)
	before := fetches.Load()
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, other, nil, map[string]any{"kid": "k2"})); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if got := fetches.Load() - before; got != 1 {
		t.Errorf("refreshes for an unknown kid = %d, want 1", got)
	}
	// Unknown kid again right away: no second fetch, refused.
	before = fetches.Load()
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, other, nil, map[string]any{"kid": "k3"})); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("unknown kid: %v", err)
	}
	if fetches.Load() != before {
		t.Error("an unknown kid refetched within the refresh gap")
	}
	// Keys server down after the cache expired.
	down.Store(true)
	tnow = now.Add(time.Hour)
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodRS256, key, func(c *claims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(2 * time.Hour)) }, map[string]any{"kid": "k1"})); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("JWKS down: %v", err)
	}
}

func TestTokenFromRequest(t *testing.T) {
	r := httptest.NewRequest("GET", "/v1/ws?token=fromurl", nil)
	if _, _, err := TokenFromRequest(r); !errors.Is(err, ErrMissingToken) {
		t.Errorf("token in the URL was read: %v", err)
	}
	r.Header.Set("Sec-WebSocket-Protocol", "purser.v1, purser.bearer.abc.def.ghi")
	if tok, sub, err := TokenFromRequest(r); err != nil || tok != "abc.def.ghi" || !sub {
		t.Errorf("subprotocol = %q %v %v", tok, sub, err)
	}
	r.Header.Set("Authorization", "Bearer xyz")
	if tok, sub, err := TokenFromRequest(r); err != nil || tok != "xyz" || sub {
		t.Errorf("header = %q %v %v", tok, sub, err)
	}
}

func TestLoadOrCreateSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jwt-secret")
	a, err := LoadOrCreateSecret(path)
	if err != nil || len(a) != 32 {
		t.Fatalf("create: %v", err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	b, err := LoadOrCreateSecret(path)
	if err != nil || string(a) != string(b) {
		t.Fatal("secret not reused")
	}
}
