package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/purser-ai/purser/pkg/contracts"
)

// maxTokenBytes bounds the work spent on a token before its signature is
// checked; purser's own tokens are a few hundred bytes.
const maxTokenBytes = 8 << 10

// minSecretBytes is the shortest HS256 secret accepted (RFC 7518 §3.2).
const minSecretBytes = 32

// Config says how tokens are verified.
type Config struct {
	Secret   []byte        // HS256 when set
	JWKSURL  string        // RS256 and ES256 when set; exactly one of Secret and JWKSURL
	Issuer   string        // required; the token's iss must equal it
	Audience string        // required; the token's aud must contain it
	Leeway   time.Duration // clock skew allowed on exp, nbf and iat
	// MaxLifetime bounds how far ahead a token's exp may be (and, when it
	// carries iat, exp - iat): a stolen long-lived token is refused.
	// Default DefaultMaxLifetime.
	MaxLifetime time.Duration
	HTTPClient  *http.Client // for JWKS; default: a client with a 5 s timeout
	Now         func() time.Time
}

// DefaultMaxLifetime is the longest token lifetime accepted by default.
const DefaultMaxLifetime = 24 * time.Hour

// MaxIssuedAhead is how far in the future (beyond Leeway) a token's iat may
// be: an issuer whose clock runs a little ahead is accepted, a token
// stamped as issued later than that is refused. A minute covers the drift
// of clocks kept by NTP; a token minted ahead of its use by more than that
// is not one an honest issuer makes.
const MaxIssuedAhead = time.Minute

// Verifier checks tokens. It is safe for concurrent use.
type Verifier struct {
	maxLifetime time.Duration
	leeway      time.Duration
	now         func() time.Time
	secret      []byte   // HS256 mode
	keys        *keySet  // JWKS mode
	methods     []string // the pinned algorithms
	parser      *jwt.Parser
}

// NewVerifier checks cfg and returns a verifier. Its errors name the bad
// setting, never its value. With a JWKSURL nothing is fetched until the
// first Verify.
func NewVerifier(cfg Config) (*Verifier, error) {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("auth: "+format, args...)) }
	switch {
	case len(cfg.Secret) > 0 && cfg.JWKSURL != "":
		bad("Secret and JWKSURL are both set; set exactly one")
	case len(cfg.Secret) == 0 && cfg.JWKSURL == "":
		bad("Secret or JWKSURL is required")
	case len(cfg.Secret) > 0 && len(cfg.Secret) < minSecretBytes:
		bad("Secret must be at least %d bytes", minSecretBytes)
	case cfg.JWKSURL != "":
		if u, err := url.Parse(cfg.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("JWKSURL must be an http(s) URL")
		}
	}
	if cfg.Issuer == "" {
		bad("Issuer is required")
	}
	if cfg.Audience == "" {
		bad("Audience is required")
	}
	if cfg.Leeway < 0 {
		bad("Leeway must not be negative")
	}
	if cfg.MaxLifetime < 0 {
		bad("MaxLifetime must not be negative")
	}
	if cfg.MaxLifetime == 0 {
		cfg.MaxLifetime = DefaultMaxLifetime
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	v := &Verifier{maxLifetime: cfg.MaxLifetime, leeway: cfg.Leeway, now: cfg.Now}
	if cfg.JWKSURL != "" {
		client := cfg.HTTPClient
		if client == nil {
			client = &http.Client{Timeout: 5 * time.Second}
		}
		v.keys = newKeySet(cfg.JWKSURL, client, cfg.Now)
		v.methods = []string{"RS256", "ES256"}
	} else {
		v.secret = slices.Clone(cfg.Secret)
		v.methods = []string{"HS256"}
	}
	v.parser = jwt.NewParser(
		jwt.WithValidMethods(v.methods),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(cfg.Now),
	)
	return v, nil
}

// Verify checks the token's algorithm, signature and claims and returns its
// principal. Errors wrap one of the Err kinds and never quote the token. In
// JWKS mode it may fetch keys over the network, bounded by ctx and the HTTP
// client's timeout.
func (v *Verifier) Verify(ctx context.Context, token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrMissingToken
	}
	if len(token) > maxTokenBytes {
		return Principal{}, fmt.Errorf("%w: token longer than %d bytes", ErrBadSignature, maxTokenBytes)
	}
	alg, kid, err := peekHeader(token)
	if err != nil {
		return Principal{}, err
	}
	// jwt.WithValidMethods enforces the same; checking first gives the
	// failure its own kind.
	if !slices.Contains(v.methods, alg) {
		return Principal{}, fmt.Errorf("%w: accepted: %s", ErrBadAlgorithm, strings.Join(v.methods, ", "))
	}
	var keyErr error
	claims := jwt.MapClaims{}
	_, err = v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		if v.keys == nil {
			return v.secret, nil
		}
		k, err := v.keys.key(ctx, kid, t.Method.Alg())
		keyErr = err
		return k, err
	})
	if keyErr != nil {
		return Principal{}, keyErr
	}
	if err != nil {
		return Principal{}, classify(err)
	}
	p, err := principalFrom(claims)
	if err != nil {
		return Principal{}, err
	}
	if err := v.checkLifetime(claims, p.ExpiresAt); err != nil {
		return Principal{}, err
	}
	return p, nil
}

// checkLifetime refuses a token that lives longer than the maximum (its
// exp too far from now, or from its own iat) and one whose iat is not a
// time or lies more than MaxIssuedAhead (plus the leeway) in the future.
// A token without iat is judged by its exp alone.
func (v *Verifier) checkLifetime(c jwt.MapClaims, exp time.Time) error {
	now := v.now()
	tooLong := fmt.Errorf("%w: lifetime longer than %s", ErrBadClaims, v.maxLifetime)
	if exp.Sub(now) > v.maxLifetime+v.leeway {
		return tooLong
	}
	iat, err := c.GetIssuedAt()
	switch {
	case err != nil:
		return fmt.Errorf("%w: iat is not a number", ErrBadClaims)
	case iat == nil:
		return nil
	case iat.Sub(now) > MaxIssuedAhead+v.leeway:
		return fmt.Errorf("%w: issued in the future (iat more than %s ahead)", ErrBadClaims, MaxIssuedAhead+v.leeway)
	case exp.Sub(iat.Time) > v.maxLifetime+v.leeway:
		return tooLong
	}
	return nil
}

// peekHeader reads alg and kid from the token's header, decoded the way
// the jwt parser decodes it.
func peekHeader(token string) (alg, kid string, err error) {
	head, _, ok := strings.Cut(token, ".")
	if !ok || strings.Count(token, ".") != 2 {
		return "", "", fmt.Errorf("%w: malformed token", ErrBadSignature)
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return "", "", fmt.Errorf("%w: malformed token header", ErrBadSignature)
	}
	var h map[string]any
	if err := json.Unmarshal(raw, &h); err != nil {
		return "", "", fmt.Errorf("%w: malformed token header", ErrBadSignature)
	}
	alg, _ = h["alg"].(string)
	kid, _ = h["kid"].(string)
	return alg, kid, nil
}

// classify maps the jwt parser's errors onto ours without keeping their
// text.
func classify(err error) error {
	var detail string
	kind := ErrBadClaims
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return ErrExpired
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		detail = "not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		detail = "wrong issuer"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		detail = "wrong audience"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		detail = "no exp"
	case errors.Is(err, jwt.ErrTokenInvalidClaims):
		detail = "invalid registered claims"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		kind, detail = ErrBadAlgorithm, "unsupported algorithm"
	case errors.Is(err, jwt.ErrTokenMalformed):
		kind, detail = ErrBadSignature, "malformed token"
	default: // jwt.ErrTokenSignatureInvalid, and anything new
		kind, detail = ErrBadSignature, "signature does not match"
	}
	return fmt.Errorf("%w: %s", kind, detail)
}

// principalFrom reads purser's claims: sub is the user, tenant the tenant,
// roles a non-empty list of known roles. Values from the token are not
// quoted in errors.
func principalFrom(c jwt.MapClaims) (Principal, error) {
	user, err := c.GetSubject()
	if err != nil || !validID(user) {
		return Principal{}, fmt.Errorf("%w: sub must match ^[A-Za-z0-9_-]{1,64}$", ErrBadClaims)
	}
	tenant, _ := c["tenant"].(string)
	if !validID(tenant) {
		return Principal{}, fmt.Errorf("%w: tenant must match ^[A-Za-z0-9_-]{1,64}$", ErrBadClaims)
	}
	list, ok := c["roles"].([]any)
	if !ok || len(list) == 0 {
		return Principal{}, fmt.Errorf("%w: roles must be a non-empty list", ErrBadClaims)
	}
	p := Principal{TenantID: tenant, UserID: user}
	for _, item := range list {
		s, _ := item.(string)
		r := Role(s)
		if !r.Valid() {
			return Principal{}, fmt.Errorf("%w: roles must be owner, member or viewer", ErrBadClaims)
		}
		if !p.HasRole(r) {
			p.Roles = append(p.Roles, r)
		}
	}
	exp, err := c.GetExpirationTime()
	if err != nil || exp == nil { // the parser already required it
		return Principal{}, fmt.Errorf("%w: no exp", ErrBadClaims)
	}
	p.ExpiresAt = exp.Time
	// Optional: a claim that is not a valid zone or currency is ignored, not
	// trusted.
	if tz, _ := c["zoneinfo"].(string); tz != "" && tz != "Local" {
		if _, err := contracts.LoadZone(tz); err == nil {
			p.Timezone = tz
		}
	}
	if cur, _ := c["currency"].(string); contracts.ValidCurrency(cur) {
		p.Currency = cur
	}
	return p, nil
}
