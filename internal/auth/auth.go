// Package auth verifies and mints the bearer tokens clients connect with.
//
// Tokens are JWTs: HS256 with a configured secret, or RS256/ES256 with keys
// from a JWKS URL. The accepted algorithms follow from the configuration and
// are never taken from the token, so "alg: none" and HS256 tokens signed with
// a public key are refused. Every failure wraps one of the exported Err kinds;
// no error message contains the token, the secret or a key.
package auth

import (
	"errors"
	"slices"
	"time"
)

// Role is what a principal may do within its tenant.
type Role string

// The roles: owners and members read and write, viewers only read.
const (
	RoleOwner  Role = "owner"
	RoleMember Role = "member"
	RoleViewer Role = "viewer"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	return r == RoleOwner || r == RoleMember || r == RoleViewer
}

// Subprotocol is the websocket subprotocol the server selects. A browser
// offers it together with bearerPrefix+token; the server never selects the
// token offer, so the token is not echoed back.
const Subprotocol = "purser.v1"

// bearerPrefix marks the subprotocol offer that carries a browser's token.
const bearerPrefix = "purser.bearer."

// Principal is who a verified token speaks for.
type Principal struct {
	TenantID, UserID string
	Roles            []Role // known roles, at least one, no duplicates
	ExpiresAt        time.Time
	// Timezone (the OIDC zoneinfo claim, an IANA name) and Currency (a
	// currency claim, ISO 4217) are the user's, when the token says them.
	Timezone, Currency string
}

// CanWrite reports whether the principal may change data (owner or member).
func (p Principal) CanWrite() bool {
	return p.HasRole(RoleOwner) || p.HasRole(RoleMember)
}

// HasRole reports whether the principal holds r.
func (p Principal) HasRole(r Role) bool {
	return slices.Contains(p.Roles, r)
}

// Failure kinds. A caller counts failures with Reason and answers 401 (503
// for ErrUnavailable) without passing the detail on.
var (
	ErrMissingToken = errors.New("no bearer token")
	ErrExpired      = errors.New("token expired")
	ErrBadSignature = errors.New("token signature not verified") // also malformed tokens and unknown key ids
	ErrBadAlgorithm = errors.New("token algorithm not allowed")
	ErrBadClaims    = errors.New("token claims rejected") // issuer, audience, tenant, user, roles, nbf, missing exp
	ErrUnavailable  = errors.New("token keys unavailable")
)

// Reason returns a short metrics label for an error from this package:
// "missing", "expired", "signature", "algorithm", "claims" or "unavailable";
// "ok" for nil and "other" for an error of another origin.
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
	case errors.Is(err, ErrBadClaims):
		return "claims"
	case errors.Is(err, ErrUnavailable):
		return "unavailable"
	}
	return "other"
}

// validID reports whether s matches ^[A-Za-z0-9_-]{1,64}$, the shape of
// tenant and user ids.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}
