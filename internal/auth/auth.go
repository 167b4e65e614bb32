// Package auth verifies and mints the bearer tokens clients connect with:
// HS256 with a configured secret, or RS256 through a JWKS URL. The
// algorithm is pinned by the configuration, never taken from the token.
package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Role is what a principal may do.
type Role string

// Roles: owners and members read and write, viewers only read.
const (
	RoleOwner  Role = "owner"
	RoleMember Role = "member"
	RoleViewer Role = "viewer"
)

// Subprotocol is the websocket subprotocol the server selects.
const Subprotocol = "purser.v1"

// bearerPrefix marks the subprotocol offer that carries a browser's token.
const bearerPrefix = "purser.bearer."

// Principal is who a verified token speaks for.
type Principal struct {
	TenantID, UserID string
	Roles            []Role
	ExpiresAt        time.Time
}

// CanWrite reports whether the principal may change data.
func (p Principal) CanWrite() bool {
	return slices.Contains(p.Roles, RoleOwner) || slices.Contains(p.Roles, RoleMember)
}

// Failure kinds. Callers count them and answer 401 without detail; no
// error message ever contains the token or a key.
var (
	ErrMissingToken = errors.New("no bearer token")
	ErrExpired      = errors.New("token expired")
	ErrBadSignature = errors.New("bad token signature")
	ErrBadAlgorithm = errors.New("token algorithm not allowed")
	ErrBadClaims    = errors.New("token claims rejected")
	ErrUnavailable  = errors.New("token keys unavailable")
)

// Reason is a short label for a verification error, for metrics.
func Reason(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrMissingToken):
		return "missing"
	case errors.Is(err, ErrExpired):
		return "expired"
	case errors.Is(err, ErrBadAlgorithm):
		return "algorithm"
	case errors.Is(err, ErrBadSignature):
		return "signature"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	}
	return "claims"
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// claims is the token body purser reads and writes.
type claims struct {
	Tenant string   `json:"tenant"`
	Roles  []string `json:"roles"`
	jwt.RegisteredClaims
}

// Config says how tokens are verified.
type Config struct {
	Secret     []byte // HS256 when set
	JWKSURL    string // RS256 when set; exactly one of Secret and JWKSURL
	Issuer     string
	Audience   string
	Leeway     time.Duration
	HTTPClient *http.Client
	Now        func() time.Time
}

// Verifier checks tokens. It is safe for concurrent use.
type Verifier struct {
	cfg    Config
	parser *jwt.Parser
	keys   *jwks
}

// NewVerifier checks cfg. Its errors name the setting, never its value.
func NewVerifier(cfg Config) (*Verifier, error) {
	switch {
	case len(cfg.Secret) > 0 && cfg.JWKSURL != "":
		return nil, errors.New("auth: set a secret or a JWKS URL, not both")
	case len(cfg.Secret) == 0 && cfg.JWKSURL == "":
		return nil, errors.New("auth: a secret or a JWKS URL is required")
	case len(cfg.Secret) > 0 && len(cfg.Secret) < 32:
		return nil, errors.New("auth: the secret must be at least 32 bytes")
	case cfg.Issuer == "":
		return nil, errors.New("auth: issuer is required")
	case cfg.Audience == "":
		return nil, errors.New("auth: audience is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	methods := []string{"HS256"}
	v := &Verifier{cfg: cfg}
	if cfg.JWKSURL != "" {
		methods = []string{"RS256"}
		client := cfg.HTTPClient
		if client == nil {
			client = &http.Client{Timeout: 5 * time.Second}
		}
		v.keys = newJWKS(cfg.JWKSURL, client, cfg.Now)
	}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(methods),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(cfg.Now),
	)
	return v, nil
}

// Verify checks token and returns its principal.
func (v *Verifier) Verify(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrMissingToken
	}
	var c claims
	_, err := v.parser.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		if v.keys == nil {
			return v.cfg.Secret, nil
		}
		kid, _ := t.Header["kid"].(string)
		return v.keys.key(ctx, kid)
	})
	if err != nil {
		return Principal{}, classify(err)
	}
	p := Principal{TenantID: c.Tenant, UserID: c.Subject}
	if c.ExpiresAt != nil {
		p.ExpiresAt = c.ExpiresAt.Time
	}
	if !idPattern.MatchString(p.TenantID) || !idPattern.MatchString(p.UserID) || len(c.Roles) == 0 {
		return Principal{}, ErrBadClaims
	}
	for _, r := range c.Roles {
		role := Role(r)
		if role != RoleOwner && role != RoleMember && role != RoleViewer {
			return Principal{}, ErrBadClaims
		}
		if !slices.Contains(p.Roles, role) {
			p.Roles = append(p.Roles, role)
		}
	}
	return p, nil
}

// classify maps jwt's errors onto ours without keeping their text, which
// can quote parts of the token.
func classify(err error) error {
	switch {
	case errors.Is(err, ErrUnavailable):
		return ErrUnavailable
	case errors.Is(err, ErrBadSignature): // no key for the token's kid
		return ErrBadSignature
	case errors.Is(err, jwt.ErrTokenExpired):
		return ErrExpired
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		// A token signed with another algorithm than the pinned one fails
		// here too ("signing method ... is invalid").
		if strings.Contains(err.Error(), "signing method") {
			return ErrBadAlgorithm
		}
		return ErrBadSignature
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return ErrBadAlgorithm
	case errors.Is(err, jwt.ErrTokenMalformed):
		return ErrBadSignature
	}
	return ErrBadClaims
}

// Minter signs HS256 tokens.
type Minter struct {
	secret           []byte
	issuer, audience string
	now              func() time.Time
}

// NewMinter returns a minter for the given secret, issuer and audience.
func NewMinter(secret []byte, issuer, audience string, now func() time.Time) *Minter {
	return &Minter{secret: secret, issuer: issuer, audience: audience, now: now}
}

// Mint signs a token for tenant and user valid for ttl.
func (m *Minter) Mint(tenant, user string, roles []Role, ttl time.Duration) (string, error) {
	if !idPattern.MatchString(tenant) {
		return "", errors.New("tenant: must be 1-64 letters, digits, '_' or '-'")
	}
	if !idPattern.MatchString(user) {
		return "", errors.New("user: must be 1-64 letters, digits, '_' or '-'")
	}
	if len(roles) == 0 {
		return "", errors.New("roles: at least one of owner, member, viewer")
	}
	rs := make([]string, len(roles))
	for i, r := range roles {
		if r != RoleOwner && r != RoleMember && r != RoleViewer {
			return "", fmt.Errorf("roles: %q is not owner, member or viewer", string(r))
		}
		rs[i] = string(r)
	}
	now := m.now()
	c := claims{Tenant: tenant, Roles: rs, RegisteredClaims: jwt.RegisteredClaims{
		Subject: user, Issuer: m.issuer, Audience: jwt.ClaimStrings{m.audience},
		IssuedAt: jwt.NewNumericDate(now), NotBefore: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
	}}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(m.secret)
}

// TokenFromRequest takes the bearer token from the Authorization header,
// or from a "purser.bearer.<token>" subprotocol offer (browsers cannot set
// headers). A token in the URL is never read.
func TokenFromRequest(r *http.Request) (token string, fromSubprotocol bool, err error) {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok && strings.TrimSpace(t) != "" {
			return strings.TrimSpace(t), false, nil
		}
		return "", false, ErrMissingToken
	}
	for _, line := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, offer := range strings.Split(line, ",") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(offer), bearerPrefix); ok && t != "" {
				return t, true, nil
			}
		}
	}
	return "", false, ErrMissingToken
}

// GenerateSecret returns 32 random bytes.
func GenerateSecret() ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return b, nil
}

// LoadOrCreateSecret reads a hex secret from path, creating it (mode 0600)
// on first use.
func LoadOrCreateSecret(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		s, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(s) < 32 {
			return nil, fmt.Errorf("secret file %s is not a 32-byte hex secret", path)
		}
		return s, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	s, err := GenerateSecret()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return LoadOrCreateSecret(path) // another process won the race
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(s) + "\n"); err != nil {
		return nil, err
	}
	return s, f.Sync()
}
