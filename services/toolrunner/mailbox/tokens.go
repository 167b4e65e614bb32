package mailbox

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// ErrNoMailAccess means the user has not connected a mailbox, or its token
// no longer works. Every such error is also a *toolrunner.ToolError whose
// message tells the user to connect Gmail.
var ErrNoMailAccess = errors.New("mail is not connected for this user")

// noAccess is an ErrNoMailAccess the model and the user read as msg.
func noAccess(msg string) error {
	return fmt.Errorf("%w: %w", ErrNoMailAccess, &toolrunner.ToolError{Code: contracts.CodeMailNotConnected, Message: msg})
}

// Messages of the access errors.
const (
	msgNotConnected = "Gmail is not connected for you. Connect it on purser's Gmail page (/mail) or with GET /v1/mail/connect, then ask again."
	msgDisconnected = "Your Gmail connection has stopped working: Google no longer accepts purser's access (it was revoked or has expired). Connect Gmail again on purser's Gmail page (/mail), then ask again."
	msgRefused      = "Gmail refused the saved access. Connect Gmail again, then ask again."
)

// Seal encrypts a token with AES-256-GCM under key (32 bytes).
func Seal(key []byte, tok *oauth2.Token) ([]byte, error) {
	aead, err := gcm(key)
	if err != nil {
		return nil, err
	}
	plain, err := json.Marshal(tok)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return aead.Seal(nonce, nonce, plain, nil), nil
}

// Open decrypts a sealed token. Errors never include the token.
func Open(key, sealed []byte) (*oauth2.Token, error) {
	aead, err := gcm(key)
	if err != nil {
		return nil, err
	}
	if len(sealed) < aead.NonceSize() {
		return nil, errors.New("mail token: too short")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
	if err != nil {
		return nil, errors.New("mail token: cannot be opened with PURSER_MAIL_TOKEN_KEY")
	}
	var tok oauth2.Token
	if err := json.Unmarshal(plain, &tok); err != nil {
		return nil, errors.New("mail token: unreadable")
	}
	return &tok, nil
}

func gcm(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("PURSER_MAIL_TOKEN_KEY must be 32 bytes, not %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// SealedStore is where sealed tokens live (internal/store has it).
type SealedStore interface {
	PutMailToken(ctx context.Context, tenantID, userID string, sealed []byte, at time.Time) error
	GetMailToken(ctx context.Context, tenantID, userID string) ([]byte, error)
	ReplaceMailToken(ctx context.Context, tenantID, userID string, prev, next []byte, at time.Time) (bool, error)
	DeleteMailToken(ctx context.Context, tenantID, userID string) (bool, error)
	DeleteMailTokenIf(ctx context.Context, tenantID, userID string, sealed []byte) (bool, error)
}

var _ SealedStore = (*store.Store)(nil)

// StoredTokens keeps users' tokens sealed in the system of record and,
// given an OAuth client, refreshes expired access tokens and seals the new
// ones back in. A zero OAuth uses tokens as they are stored (tokens from
// 'purser mail-token' without a configured client).
type StoredTokens struct {
	Store SealedStore
	Key   []byte
	// OAuth is the Google client that refreshes tokens; nil: no refresh.
	OAuth *oauth2.Config
	// HTTPClient reaches the token endpoint. Default: a 30 s timeout.
	HTTPClient *http.Client
	// Disconnected, when not nil, is told that Google refused a user's
	// refresh token, before that token is deleted. id is the same for
	// every report of one stored token, so a publisher that dedupes on it
	// tells the user once.
	Disconnected func(ctx context.Context, tenant, user, id string) error
	// Now stamps stored tokens. Default time.Now.
	Now func() time.Time
}

// Put seals and stores a user's token.
func (s StoredTokens) Put(ctx context.Context, tenant, user string, tok *oauth2.Token) error {
	sealed, err := Seal(s.Key, tok)
	if err != nil {
		return err
	}
	return s.Store.PutMailToken(ctx, tenant, user, sealed, s.now())
}

func (s StoredTokens) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s StoredTokens) httpClient() *http.Client {
	if s.HTTPClient != nil {
		return s.HTTPClient
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// load returns a user's stored token and its sealed form, or ErrNoMailAccess.
func (s StoredTokens) load(ctx context.Context, tenant, user string) (*oauth2.Token, []byte, error) {
	sealed, err := s.Store.GetMailToken(ctx, tenant, user)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, noAccess(msgNotConnected)
	} else if err != nil {
		return nil, nil, fmt.Errorf("read mail token: %w", err)
	}
	tok, err := Open(s.Key, sealed)
	if err != nil {
		return nil, nil, err
	}
	return tok, sealed, nil
}

// Token returns a user's token as stored, or ErrNoMailAccess.
func (s StoredTokens) Token(ctx context.Context, tenant, user string) (*oauth2.Token, error) {
	tok, _, err := s.load(ctx, tenant, user)
	return tok, err
}

// TokenSource returns a source of valid access tokens for the user, or
// ErrNoMailAccess. The source refreshes an expired token through OAuth
// under ctx, and seals the new one into the store in place of the one it
// loaded (unless that was replaced meanwhile). When Google refuses the
// refresh token (invalid_grant), Disconnected is told, the token is
// deleted and the source returns ErrNoMailAccess. It is safe for
// concurrent use and lives no longer than ctx.
func (s StoredTokens) TokenSource(ctx context.Context, tenant, user string) (oauth2.TokenSource, error) {
	tok, sealed, err := s.load(ctx, tenant, user)
	if err != nil {
		return nil, err
	}
	return &storedSource{ctx: ctx, st: s, tenant: tenant, user: user, tok: tok, sealed: sealed}, nil
}

// storedSource keeps the context of the call it serves: oauth2.TokenSource
// has no context parameter, and the source lives only as long as the call.
type storedSource struct {
	ctx          context.Context
	st           StoredTokens
	tenant, user string

	mu     sync.Mutex
	tok    *oauth2.Token
	sealed []byte
}

func (s *storedSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.st.OAuth == nil || s.tok.Valid() {
		return s.tok, nil
	}
	if s.tok.RefreshToken == "" {
		return nil, noAccess(msgDisconnected)
	}
	ctx := context.WithValue(s.ctx, oauth2.HTTPClient, s.st.httpClient())
	next, err := s.st.OAuth.TokenSource(ctx, &oauth2.Token{RefreshToken: s.tok.RefreshToken}).Token()
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
		return nil, s.broken()
	case errors.As(err, &re) && re.Response != nil:
		// Neither the response body nor the request is quoted: either
		// may carry a token or the client secret.
		return nil, fmt.Errorf("gmail: refresh access token: the token endpoint answered HTTP %d", re.Response.StatusCode)
	case err != nil:
		return nil, errors.New("gmail: refresh access token: the token endpoint is unreachable")
	}
	sealed, err := Seal(s.st.Key, next)
	if err != nil {
		return nil, err
	}
	if _, err := s.st.Store.ReplaceMailToken(s.ctx, s.tenant, s.user, s.sealed, sealed, s.st.now()); err != nil {
		return nil, fmt.Errorf("store refreshed mail token: %w", err)
	}
	// Not replaced: a reconnect or another refresh stored a token
	// meanwhile, which stays; this one is still good for this call.
	s.tok, s.sealed = next, sealed
	return next, nil
}

// broken tells Disconnected that the stored token no longer works, then
// deletes it, and returns the error the tool answers with. A failure to
// tell keeps the token, so that the next call tells again.
func (s *storedSource) broken() error {
	sum := sha256.Sum256(s.sealed)
	id := "mail-" + hex.EncodeToString(sum[:16])
	if s.st.Disconnected != nil {
		if err := s.st.Disconnected(s.ctx, s.tenant, s.user, id); err != nil {
			return fmt.Errorf("report broken mail connection: %w", err)
		}
	}
	if _, err := s.st.Store.DeleteMailTokenIf(s.ctx, s.tenant, s.user, s.sealed); err != nil {
		return fmt.Errorf("drop broken mail token: %w", err)
	}
	return noAccess(msgDisconnected)
}
