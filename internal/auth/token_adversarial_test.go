package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Rule: a token's claims are what its signer wrote. Token attacks that
// rewrite a claim of a validly signed token (another tenant, a stronger
// role, a later expiry), re-sign it with a key the verifier does not hold,
// or relabel the algorithm so that the HMAC secret would verify another
// scheme, are all refused, and the principal stays empty.
func TestTokenAttacks(t *testing.T) {
	v, err := NewVerifier(Config{Secret: testSecret, Issuer: "purser", Audience: "purser", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	valid := sign(t, jwt.SigningMethodHS256, testSecret, "", claims(func(c jwt.MapClaims) { c["roles"] = []string{"viewer"} }))
	parts := strings.Split(valid, ".")
	// rewrite changes claims of the valid token and keeps its signature.
	rewrite := func(edit func(jwt.MapClaims)) string {
		c := claims(func(c jwt.MapClaims) { c["roles"] = []string{"viewer"} })
		edit(c)
		b, _ := json.Marshal(c)
		return parts[0] + "." + enc(b) + "." + parts[2]
	}
	// hmacAs signs the valid token's body with the secret under another
	// header, as an attacker who knows the scheme but not the rules would.
	hmacAs := func(header string) string {
		signing := enc([]byte(header)) + "." + parts[1]
		m := hmac.New(sha256.New, testSecret)
		m.Write([]byte(signing))
		return signing + "." + enc(m.Sum(nil))
	}
	tests := []struct {
		name  string
		token string
		want  error
	}{
		{"another tenant written into a signed token", rewrite(func(c jwt.MapClaims) { c["tenant"] = "bravo" }), ErrBadSignature},
		{"another user written into a signed token", rewrite(func(c jwt.MapClaims) { c["sub"] = "bob" }), ErrBadSignature},
		{"a viewer made owner", rewrite(func(c jwt.MapClaims) { c["roles"] = []string{"owner"} }), ErrBadSignature},
		{"the expiry pushed back", rewrite(func(c jwt.MapClaims) { c["exp"] = t0.Add(20 * time.Hour).Unix() }), ErrBadSignature},
		{"the signature of another token", parts[0] + "." + parts[1] + "." + strings.Split(sign(t, jwt.SigningMethodHS256, testSecret, "", claims(nil)), ".")[2], ErrBadSignature},
		{"no signature", parts[0] + "." + parts[1] + ".", ErrBadSignature},
		{"signed with an empty key", sign(t, jwt.SigningMethodHS256, []byte{}, "", claims(nil)), ErrBadSignature},
		{"signed with the secret's prefix", sign(t, jwt.SigningMethodHS256, testSecret[:16], "", claims(nil)), ErrBadSignature},
		{"HMAC under an RS256 header", hmacAs(`{"alg":"RS256","typ":"JWT"}`), ErrBadAlgorithm},
		{"HMAC under an ES256 header", hmacAs(`{"alg":"ES256","typ":"JWT"}`), ErrBadAlgorithm},
		{"alg none with the valid signature", enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + "." + parts[2], ErrBadAlgorithm},
		{"expired, another tenant, other key", sign(t, jwt.SigningMethodHS256, []byte("another-secret-another-secret-xx"), "", claims(func(c jwt.MapClaims) {
			c["tenant"], c["exp"] = "bravo", t0.Add(-time.Hour).Unix()
		})), ErrBadSignature},
	}
	if _, err := v.Verify(context.Background(), valid); err != nil {
		t.Fatalf("the untouched token: %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := v.Verify(context.Background(), tt.token)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify() = %+v, %v; want %v", got, err, tt.want)
			}
			if got.TenantID != "" || got.UserID != "" || got.Roles != nil {
				t.Errorf("Verify() returned principal %+v with an error", got)
			}
			assertNoLeak(t, err, tt.token, string(testSecret))
		})
	}
}
