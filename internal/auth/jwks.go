package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"
)

const (
	jwksTTL          = 5 * time.Minute  // keys are refetched after this
	jwksKidRefresh   = 30 * time.Second // at most one refetch per this for unknown kids
	jwksRetry        = 5 * time.Second  // after a failed fetch, no new attempt before this
	jwksMaxStale     = time.Hour        // stale keys serve while the JWKS is down, up to this age
	jwksMaxBytes     = 1 << 20
	minRSAKeyBits    = 2048
	errUnknownKeyMsg = "no key for the token's kid"
)

// keySet fetches and caches the public keys of a JWKS URL. Keys are fetched
// on first use and kept for jwksTTL. A token naming an unknown kid triggers
// a refetch at most once per jwksKidRefresh. When a refetch fails, the old
// keys keep serving for up to jwksMaxStale after the last success. One fetch
// runs at a time; it is safe for concurrent use.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time
	fetch  chan struct{} // holds a token while a fetch runs

	mu         sync.Mutex
	keys       map[string]publicKey
	fetched    time.Time // last successful fetch
	failed     time.Time // last failed fetch
	lastErr    error
	kidRefresh time.Time // last refetch caused by an unknown kid
}

// publicKey is a verification key and the one algorithm it serves.
type publicKey struct {
	alg string // "RS256" or "ES256"
	key any    // *rsa.PublicKey or *ecdsa.PublicKey
}

func newKeySet(url string, client *http.Client, now func() time.Time) *keySet {
	return &keySet{url: url, client: client, now: now, fetch: make(chan struct{}, 1)}
}

// key returns the key for kid that verifies alg.
func (s *keySet) key(ctx context.Context, kid, alg string) (any, error) {
	s.mu.Lock()
	k, ok := s.lookup(kid)
	fresh := s.keys != nil && s.now().Sub(s.fetched) < jwksTTL
	s.mu.Unlock()
	if fresh && ok {
		return k.forAlg(alg)
	}

	select {
	case s.fetch <- struct{}{}:
		defer func() { <-s.fetch }()
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, ctx.Err())
	}

	// Decide again: another caller may have fetched while this one waited.
	s.mu.Lock()
	now := s.now()
	k, ok = s.lookup(kid)
	fresh = s.keys != nil && now.Sub(s.fetched) < jwksTTL
	usable := s.keys != nil && now.Sub(s.fetched) < jwksMaxStale
	switch {
	case fresh && ok:
		s.mu.Unlock()
		return k.forAlg(alg)
	case fresh && now.Sub(s.kidRefresh) < jwksKidRefresh:
		s.mu.Unlock()
		return nil, fmt.Errorf("%w: %s", ErrBadSignature, errUnknownKeyMsg)
	case fresh:
		s.kidRefresh = now
	case !s.failed.IsZero() && now.Sub(s.failed) < jwksRetry:
		lastErr := s.lastErr
		s.mu.Unlock()
		return staleOr(usable, ok, k, alg, lastErr)
	}
	s.mu.Unlock()

	keys, err := s.get(ctx)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if ctx.Err() == nil { // a caller's cancellation says nothing about the server
			s.failed, s.lastErr = now, err
		}
		return staleOr(usable, ok, k, alg, err)
	}
	s.keys, s.fetched, s.failed, s.lastErr = keys, now, time.Time{}, nil
	if k, ok := s.lookup(kid); ok {
		return k.forAlg(alg)
	}
	return nil, fmt.Errorf("%w: %s", ErrBadSignature, errUnknownKeyMsg)
}

// staleOr answers when no fresh keys could be had: the stale key if it is
// still usable, else ErrUnavailable.
func staleOr(usable, ok bool, k publicKey, alg string, fetchErr error) (any, error) {
	if usable && ok {
		return k.forAlg(alg)
	}
	return nil, fetchErr
}

// lookup finds kid's key. A token without a kid matches a set of one key.
// The caller holds s.mu.
func (s *keySet) lookup(kid string) (publicKey, bool) {
	if k, ok := s.keys[kid]; ok {
		return k, true
	}
	if kid == "" && len(s.keys) == 1 {
		for _, k := range s.keys {
			return k, true
		}
	}
	return publicKey{}, false
}

func (k publicKey) forAlg(alg string) (any, error) {
	if k.alg != alg {
		return nil, fmt.Errorf("%w: the key for this kid is for %s", ErrBadAlgorithm, k.alg)
	}
	return k.key, nil
}

// jwk is one key of a JWKS document (RFC 7517).
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// get fetches and parses the JWKS. Its errors wrap ErrUnavailable. Keys it
// cannot use (other types, encryption keys, short RSA keys) are skipped;
// a document without a usable key is an error.
func (s *keySet) get(ctx context.Context) (map[string]publicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: JWKS request: %w", ErrUnavailable, err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: fetch JWKS: %w", ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: fetch JWKS: status %d", ErrUnavailable, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, jwksMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read JWKS: %w", ErrUnavailable, err)
	}
	if len(body) > jwksMaxBytes {
		return nil, fmt.Errorf("%w: JWKS larger than %d bytes", ErrUnavailable, jwksMaxBytes)
	}
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%w: JWKS is not a JSON key set", ErrUnavailable)
	}
	keys := map[string]publicKey{}
	for _, j := range doc.Keys {
		if k, err := j.publicKey(); err == nil {
			keys[j.Kid] = k
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: JWKS has no usable RS256 or ES256 signing key", ErrUnavailable)
	}
	return keys, nil
}

func (j jwk) publicKey() (publicKey, error) {
	if j.Use != "" && j.Use != "sig" {
		return publicKey{}, errors.New("not a signing key")
	}
	switch j.Kty {
	case "RSA":
		if j.Alg != "" && j.Alg != "RS256" {
			return publicKey{}, errors.New("not an RS256 key")
		}
		n, err1 := base64.RawURLEncoding.DecodeString(j.N)
		e, err2 := base64.RawURLEncoding.DecodeString(j.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return publicKey{}, errors.New("bad RSA key")
		}
		k := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if k.N.BitLen() < minRSAKeyBits || k.E < 3 || k.E%2 == 0 {
			return publicKey{}, errors.New("weak RSA key")
		}
		return publicKey{alg: "RS256", key: k}, nil
	case "EC":
		if j.Crv != "P-256" || (j.Alg != "" && j.Alg != "ES256") {
			return publicKey{}, errors.New("not an ES256 key")
		}
		x, err1 := base64.RawURLEncoding.DecodeString(j.X)
		y, err2 := base64.RawURLEncoding.DecodeString(j.Y)
		if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
			return publicKey{}, errors.New("bad EC key")
		}
		k, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return publicKey{}, errors.New("bad EC key")
		}
		return publicKey{alg: "ES256", key: k}, nil
	}
	return publicKey{}, errors.New("unsupported key type")
}
