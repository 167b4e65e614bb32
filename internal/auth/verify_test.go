package auth

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/go-cmp/cmp"
)

func TestNewVerifierConfig(t *testing.T) {
	tests := []struct {
		name string
		give Config
		want string // a fragment of the error, "" for none
	}{
		{"secret", Config{Secret: testSecret, Issuer: "i", Audience: "a"}, ""},
		{"jwks", Config{JWKSURL: "https://idp.example/jwks.json", Issuer: "i", Audience: "a"}, ""},
		{"both", Config{Secret: testSecret, JWKSURL: "https://idp.example/jwks.json", Issuer: "i", Audience: "a"}, "Secret and JWKSURL"},
		{"neither", Config{Issuer: "i", Audience: "a"}, "Secret or JWKSURL"},
		{"short secret", Config{Secret: []byte("hunter2-hunter2"), Issuer: "i", Audience: "a"}, "Secret must be at least 32 bytes"},
		{"jwks not http", Config{JWKSURL: "file:///etc/jwks", Issuer: "i", Audience: "a"}, "JWKSURL"},
		{"no issuer", Config{Secret: testSecret, Audience: "a"}, "Issuer"},
		{"no audience", Config{Secret: testSecret, Issuer: "i"}, "Audience"},
		{"negative leeway", Config{Secret: testSecret, Issuer: "i", Audience: "a", Leeway: -time.Second}, "Leeway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewVerifier(tt.give)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("NewVerifier() error = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("NewVerifier() error = %v, want one naming %q", err, tt.want)
			}
			assertNoLeak(t, err, string(testSecret), "hunter2")
		})
	}
}

func TestVerifyHS256(t *testing.T) {
	clk := newClock()
	v, err := NewVerifier(Config{Secret: testSecret, Issuer: "purser", Audience: "purser", Leeway: 10 * time.Second, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	hs := func(edit func(jwt.MapClaims)) string {
		return sign(t, jwt.SigningMethodHS256, testSecret, "", claims(edit))
	}
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"valid", hs(nil), nil},
		{"valid within leeway after exp", hs(func(c jwt.MapClaims) { c["exp"] = t0.Add(-5 * time.Second).Unix() }), nil},
		{"audience in a list", hs(func(c jwt.MapClaims) { c["aud"] = []string{"other", "purser"} }), nil},
		{"missing", "", ErrMissingToken},
		{"expired", hs(func(c jwt.MapClaims) { c["exp"] = t0.Add(-time.Minute).Unix() }), ErrExpired},
		{"no exp", hs(func(c jwt.MapClaims) { delete(c, "exp") }), ErrBadClaims},
		{"exp not a number", hs(func(c jwt.MapClaims) { c["exp"] = "tomorrow" }), ErrBadClaims},
		{"not yet valid", hs(func(c jwt.MapClaims) { c["nbf"] = t0.Add(time.Hour).Unix() }), ErrBadClaims},
		{"bad signature", sign(t, jwt.SigningMethodHS256, []byte("another-secret-another-secret-xx"), "", claims(nil)), ErrBadSignature},
		{"tampered body", tamper(hs(nil)), ErrBadSignature},
		{"alg none", unsigned(t, `{"alg":"none","typ":"JWT"}`, claims(nil)), ErrBadAlgorithm},
		{"alg NONE", unsigned(t, `{"alg":"NONE","typ":"JWT"}`, claims(nil)), ErrBadAlgorithm},
		{"no alg", unsigned(t, `{"typ":"JWT"}`, claims(nil)), ErrBadAlgorithm},
		{"HS512 with the right secret", sign(t, jwt.SigningMethodHS512, testSecret, "", claims(nil)), ErrBadAlgorithm},
		{"HS384 with the right secret", sign(t, jwt.SigningMethodHS384, testSecret, "", claims(nil)), ErrBadAlgorithm},
		{"wrong issuer", hs(func(c jwt.MapClaims) { c["iss"] = "evil" }), ErrBadClaims},
		{"no issuer", hs(func(c jwt.MapClaims) { delete(c, "iss") }), ErrBadClaims},
		{"wrong audience", hs(func(c jwt.MapClaims) { c["aud"] = "other" }), ErrBadClaims},
		{"no audience", hs(func(c jwt.MapClaims) { delete(c, "aud") }), ErrBadClaims},
		{"bad tenant", hs(func(c jwt.MapClaims) { c["tenant"] = "a.b" }), ErrBadClaims},
		{"no tenant", hs(func(c jwt.MapClaims) { delete(c, "tenant") }), ErrBadClaims},
		{"tenant not a string", hs(func(c jwt.MapClaims) { c["tenant"] = 7 }), ErrBadClaims},
		{"long tenant", hs(func(c jwt.MapClaims) { c["tenant"] = strings.Repeat("t", 65) }), ErrBadClaims},
		{"bad user", hs(func(c jwt.MapClaims) { c["sub"] = "*" }), ErrBadClaims},
		{"no user", hs(func(c jwt.MapClaims) { delete(c, "sub") }), ErrBadClaims},
		{"unknown role", hs(func(c jwt.MapClaims) { c["roles"] = []string{"member", "admin"} }), ErrBadClaims},
		{"no roles", hs(func(c jwt.MapClaims) { delete(c, "roles") }), ErrBadClaims},
		{"empty roles", hs(func(c jwt.MapClaims) { c["roles"] = []string{} }), ErrBadClaims},
		{"roles not a list", hs(func(c jwt.MapClaims) { c["roles"] = "owner" }), ErrBadClaims},
		{"a 100-year lifetime", hs(func(c jwt.MapClaims) { c["exp"] = t0.AddDate(100, 0, 0).Unix() }), ErrBadClaims},
		{"exp a day and an hour ahead", hs(func(c jwt.MapClaims) { c["exp"] = t0.Add(25 * time.Hour).Unix() }), ErrBadClaims},
		{"issued with a two-day lifetime", hs(func(c jwt.MapClaims) {
			c["iat"] = t0.Add(-47 * time.Hour).Unix()
			c["exp"] = t0.Add(time.Hour).Unix()
		}), ErrBadClaims},
		{"exp a day ahead", hs(func(c jwt.MapClaims) { c["exp"] = t0.Add(24 * time.Hour).Unix() }), nil},
		{"garbage", "abc.def.ghi", ErrBadSignature},
		{"two segments", "abc.def", ErrBadSignature},
		{"too long", hs(func(c jwt.MapClaims) { c["pad"] = strings.Repeat("x", maxTokenBytes) }), ErrBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := v.Verify(context.Background(), tt.token)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify() error = %v, want %v", err, tt.want)
			}
			assertNoLeak(t, err, tt.token, string(testSecret))
			if err != nil {
				if got.TenantID != "" || got.UserID != "" || got.Roles != nil {
					t.Errorf("Verify() returned principal %+v with error", got)
				}
				return
			}
			if got.TenantID != "acme" || got.UserID != "ann" || !got.CanWrite() {
				t.Errorf("Verify() = %+v, want ann of acme, a member", got)
			}
		})
	}
}

// A token's iat may lie at most MaxIssuedAhead plus the leeway in the
// future: a clock a little ahead is tolerated, a token stamped as issued
// years from now is refused (the lifetime cap alone let it through), and
// an iat that is not a number is not ignored.
func TestVerifyIssuedAt(t *testing.T) {
	tests := []struct {
		name   string
		leeway time.Duration
		give   any // the iat claim; nil leaves it out
		want   error
		detail string // a fragment of the error
	}{
		{"no iat", 0, nil, nil, ""},
		{"issued now", 0, t0.Unix(), nil, ""},
		{"issued an hour ago", 0, t0.Add(-time.Hour).Unix(), nil, ""},
		{"a minute ahead", 0, t0.Add(MaxIssuedAhead).Unix(), nil, ""},
		{"a minute and a second ahead", 0, t0.Add(MaxIssuedAhead + time.Second).Unix(), ErrBadClaims, "issued in the future"},
		{"an hour ahead", 0, t0.Add(time.Hour).Unix(), ErrBadClaims, "issued in the future"},
		{"years ahead", 0, t0.AddDate(5, 0, 0).Unix(), ErrBadClaims, "issued in the future"},
		{"a minute and ten seconds ahead within a 10 s leeway", 10 * time.Second, t0.Add(MaxIssuedAhead + 10*time.Second).Unix(), nil, ""},
		{"beyond the minute and the leeway", 10 * time.Second, t0.Add(MaxIssuedAhead + 11*time.Second).Unix(), ErrBadClaims, "issued in the future"},
		{"not a number", 0, "yesterday", ErrBadClaims, "iat"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := NewVerifier(Config{Secret: testSecret, Issuer: "purser", Audience: "purser", Leeway: tt.leeway, Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			token := sign(t, jwt.SigningMethodHS256, testSecret, "", claims(func(c jwt.MapClaims) {
				if tt.give != nil {
					c["iat"] = tt.give
				}
			}))
			got, err := v.Verify(context.Background(), token)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify() error = %v, want %v", err, tt.want)
			}
			if err != nil && !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("Verify() error = %q, want one saying %q", err, tt.detail)
			}
			if err != nil && (got.TenantID != "" || got.UserID != "") {
				t.Errorf("Verify() returned principal %+v with an error", got)
			}
		})
	}
}

// tamper changes the token's body without re-signing it.
func tamper(token string) string {
	parts := strings.Split(token, ".")
	b := []byte(parts[1])
	if b[3] == 'A' {
		b[3] = 'B'
	} else {
		b[3] = 'A'
	}
	return parts[0] + "." + string(b) + "." + parts[2]
}

func TestVerifyPrincipal(t *testing.T) {
	v, err := NewVerifier(Config{Secret: testSecret, Issuer: "purser", Audience: "purser", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	token := sign(t, jwt.SigningMethodHS256, testSecret, "", claims(func(c jwt.MapClaims) {
		c["roles"] = []string{"viewer", "owner", "viewer"}
	}))
	got, err := v.Verify(context.Background(), token)
	if err != nil {
		t.Fatal(err)
	}
	want := Principal{TenantID: "acme", UserID: "ann", Roles: []Role{RoleViewer, RoleOwner}, ExpiresAt: t0.Add(time.Hour)}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("Verify() principal (-want +got):\n%s", diff)
	}
}

// A token may say the user's time zone (zoneinfo) and currency; values
// that are not a zone or an ISO 4217 currency are ignored, not trusted.
func TestVerifyZoneAndCurrencyClaims(t *testing.T) {
	v, err := NewVerifier(Config{Secret: testSecret, Issuer: "purser", Audience: "purser", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ zone, currency, wantZone, wantCurrency string }{
		{"Europe/Paris", "EUR", "Europe/Paris", "EUR"},
		{"Mars/Olympus", "XXX", "", ""},
		{"Local", "eur", "", ""},
		{"", "", "", ""},
	}
	for _, tt := range tests {
		token := sign(t, jwt.SigningMethodHS256, testSecret, "", claims(func(c jwt.MapClaims) {
			if tt.zone != "" {
				c["zoneinfo"] = tt.zone
			}
			if tt.currency != "" {
				c["currency"] = tt.currency
			}
		}))
		p, err := v.Verify(context.Background(), token)
		if err != nil || p.Timezone != tt.wantZone || p.Currency != tt.wantCurrency {
			t.Errorf("zoneinfo %q currency %q: principal %+v, %v; want %q %q", tt.zone, tt.currency, p, err, tt.wantZone, tt.wantCurrency)
		}
	}
}
