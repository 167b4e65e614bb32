package auth

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Minter signs HS256 tokens that a Verifier with the same secret, issuer and
// audience accepts. It is safe for concurrent use.
type Minter struct {
	secret           []byte
	issuer, audience string
	now              func() time.Time
}

// tokenClaims is the body of a minted token.
type tokenClaims struct {
	jwt.RegisteredClaims
	Tenant string `json:"tenant"`
	Roles  []Role `json:"roles"`
}

// NewMinter returns a minter. A nil now means time.Now. The secret is
// checked by Mint, which is where a caller can handle the error.
func NewMinter(secret []byte, issuer, audience string, now func() time.Time) *Minter {
	if now == nil {
		now = time.Now
	}
	return &Minter{secret: slices.Clone(secret), issuer: issuer, audience: audience, now: now}
}

// Mint signs a token for user in tenant with roles, valid for ttl from now.
// Bad arguments are reported with ErrBadClaims; errors never contain the
// secret.
func (m *Minter) Mint(tenant, user string, roles []Role, ttl time.Duration) (string, error) {
	switch {
	case len(m.secret) < minSecretBytes:
		return "", fmt.Errorf("auth: the signing secret must be at least %d bytes", minSecretBytes)
	case m.issuer == "" || m.audience == "":
		return "", errors.New("auth: issuer and audience are required to mint")
	case !validID(tenant):
		return "", fmt.Errorf("%w: tenant %q must match ^[A-Za-z0-9_-]{1,64}$", ErrBadClaims, tenant)
	case !validID(user):
		return "", fmt.Errorf("%w: user %q must match ^[A-Za-z0-9_-]{1,64}$", ErrBadClaims, user)
	case len(roles) == 0:
		return "", fmt.Errorf("%w: at least one role (owner, member, viewer) is required", ErrBadClaims)
	case ttl <= 0:
		return "", fmt.Errorf("auth: ttl must be positive, got %s", ttl)
	}
	var rs []Role
	for _, r := range roles {
		if !r.Valid() {
			return "", fmt.Errorf("%w: role %q is not owner, member or viewer", ErrBadClaims, string(r))
		}
		if !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	now := m.now()
	c := tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    m.issuer,
			Subject:   user,
			Audience:  jwt.ClaimStrings{m.audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
		},
		Tenant: tenant,
		Roles:  rs,
	}
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(m.secret)
	if err != nil {
		return "", fmt.Errorf("auth: sign token: %w", err)
	}
	return token, nil
}
