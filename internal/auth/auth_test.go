package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	testSecret = []byte("0123456789abcdef0123456789abcdef")
	t0         = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
)

// clock is a settable time source, safe for concurrent use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// claims returns valid claims for user ann of tenant acme, changed by edit.
func claims(edit func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{
		"iss": "purser", "aud": "purser", "sub": "ann", "tenant": "acme",
		"roles": []string{"member"}, "exp": t0.Add(time.Hour).Unix(),
	}
	if edit != nil {
		edit(c)
	}
	return c
}

func sign(t *testing.T, method jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	return s
}

// unsigned hand-crafts a token with the given header and an empty signature.
func unsigned(t *testing.T, header string, c jwt.MapClaims) string {
	t.Helper()
	body, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(header)) + "." + enc(body) + "."
}

// assertNoLeak fails when err's message quotes any of the secrets.
func assertNoLeak(t *testing.T, err error, secrets ...string) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q quotes a token or secret", err)
		}
	}
}

func TestReason(t *testing.T) {
	tests := []struct {
		give error
		want string
	}{
		{nil, "ok"},
		{ErrMissingToken, "missing"},
		{fmt.Errorf("%w: detail", ErrExpired), "expired"},
		{fmt.Errorf("%w: detail", ErrBadSignature), "signature"},
		{fmt.Errorf("%w: detail", ErrBadAlgorithm), "algorithm"},
		{fmt.Errorf("%w: detail", ErrBadClaims), "claims"},
		{fmt.Errorf("%w: %w", ErrUnavailable, errors.New("dial")), "unavailable"},
		{errors.New("elsewhere"), "other"},
	}
	for _, tt := range tests {
		if got := Reason(tt.give); got != tt.want {
			t.Errorf("Reason(%v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestPrincipalCanWrite(t *testing.T) {
	tests := []struct {
		give []Role
		want bool
	}{
		{[]Role{RoleOwner}, true},
		{[]Role{RoleMember}, true},
		{[]Role{RoleViewer}, false},
		{[]Role{RoleViewer, RoleMember}, true},
		{nil, false},
		{[]Role{"admin"}, false},
	}
	for _, tt := range tests {
		if got := (Principal{Roles: tt.give}).CanWrite(); got != tt.want {
			t.Errorf("CanWrite(%v) = %v, want %v", tt.give, got, tt.want)
		}
	}
}

func TestValidID(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"acme", true},
		{"A-Z_0-9", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"a.b", false},
		{"a b", false},
		{"é", false},
		{"../x", false},
	}
	for _, tt := range tests {
		if got := validID(tt.give); got != tt.want {
			t.Errorf("validID(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
