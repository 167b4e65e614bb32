// Package googletest is an HTTP server playing Google's OAuth endpoints
// for tests: a consent page that approves at once and redirects with a
// code, a token endpoint (authorization_code with PKCE, refresh_token,
// invalid_grant for codes and refresh tokens it does not know or has
// revoked) and a revoke endpoint.
package googletest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Scope is the scope granted (gmail.readonly).
const Scope = "https://www.googleapis.com/auth/gmail.readonly"

// Server is the fake Google. Its zero-valued fields are set by New.
type Server struct {
	URL                    string
	AuthURL, TokenURL      string
	RevokeURL              string
	ClientID, ClientSecret string
	// AccessToken is what every grant issues as the access token;
	// ExpiresIn its lifetime in seconds.
	AccessToken string
	ExpiresIn   int

	mu       sync.Mutex
	codes    map[string]grant // code -> what it was issued for
	refresh  map[string]bool  // refresh token -> revoked
	revoked  []string
	grants   map[string]int // grant type -> times answered with a token
	sequence int
	noRT     bool // codes are exchanged without a refresh token
}

// OmitRefreshTokens makes code exchanges answer without a refresh token,
// as Google does when the user had already granted access.
func (s *Server) OmitRefreshTokens(omit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noRT = omit
}

type grant struct {
	challenge, redirect, scope string
}

// New starts a server for the test's lifetime, with client id and secret.
func New(t testing.TB, clientID, clientSecret, accessToken string) *Server {
	s := &Server{ClientID: clientID, ClientSecret: clientSecret, AccessToken: accessToken, ExpiresIn: 3600,
		codes: map[string]grant{}, refresh: map[string]bool{}, grants: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /auth", s.auth)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("POST /revoke", s.revoke)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	s.AuthURL, s.TokenURL, s.RevokeURL = srv.URL+"/auth", srv.URL+"/token", srv.URL+"/revoke"
	return s
}

// AddRefreshToken makes rt a refresh token the server accepts.
func (s *Server) AddRefreshToken(rt string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh[rt] = false
}

// Revoke revokes a refresh token, as a user does at Google.
func (s *Server) Revoke(rt string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refresh[rt] = true
}

// RevokeAll revokes every refresh token issued or added so far.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for rt := range s.refresh {
		s.refresh[rt] = true
	}
}

// RefreshTokens returns every refresh token issued or added so far.
func (s *Server) RefreshTokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for rt := range s.refresh {
		out = append(out, rt)
	}
	return out
}

// Revoked returns the tokens the revoke endpoint was given, in order.
func (s *Server) Revoked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.revoked...)
}

// Grants returns how many times grantType was answered with a token.
func (s *Server) Grants(grantType string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.grants[grantType]
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": "refused by googletest"})
}

// auth is the consent page: the user approves at once, and is sent back to
// redirect_uri with a code and the state.
func (s *Server) auth(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("client_id") != s.ClientID || q.Get("response_type") != "code" || q.Get("redirect_uri") == "" {
		http.Error(w, "bad consent request", http.StatusBadRequest)
		return
	}
	if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("access_type") != "offline" {
		http.Error(w, "consent request without PKCE or offline access", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.sequence++
	code := fmt.Sprintf("4/code-%d", s.sequence)
	s.codes[code] = grant{challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri"), scope: q.Get("scope")}
	s.mu.Unlock()
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := back.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) clientOK(r *http.Request) bool {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	} else {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	return id == s.ClientID && secret == s.ClientSecret
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	if !s.clientOK(r) {
		oauthError(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	gt := r.PostForm.Get("grant_type")
	body := map[string]any{"access_token": s.AccessToken, "token_type": "Bearer", "expires_in": s.ExpiresIn, "scope": Scope}
	switch gt {
	case "authorization_code":
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code")) // a code is good once
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.redirect != r.PostForm.Get("redirect_uri") || base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
		if !strings.Contains(g.scope, Scope) {
			body["scope"] = "openid"
		}
		if !s.noRT {
			s.sequence++
			rt := fmt.Sprintf("1//refresh-%d", s.sequence)
			s.refresh[rt] = false
			body["refresh_token"] = rt
		}
	case "refresh_token":
		revoked, ok := s.refresh[r.PostForm.Get("refresh_token")]
		if !ok || revoked {
			oauthError(w, http.StatusBadRequest, "invalid_grant")
			return
		}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type")
		return
	}
	s.grants[gt]++
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.PostForm.Get("token") == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := r.PostForm.Get("token")
	s.revoked = append(s.revoked, t)
	if _, ok := s.refresh[t]; !ok {
		oauthError(w, http.StatusBadRequest, "invalid_token")
		return
	}
	s.refresh[t] = true
	w.WriteHeader(http.StatusOK)
}
