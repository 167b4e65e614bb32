package mailbox

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/oauth2"
)

// ErrNoMailAccess means the user has not connected a mailbox, or its token
// no longer works.
var ErrNoMailAccess = errors.New("mail is not connected for this user")

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
}

// StoredTokens keeps users' tokens sealed in the system of record.
type StoredTokens struct {
	Store SealedStore
	Key   []byte
}

// Put seals and stores a user's token.
func (s StoredTokens) Put(ctx context.Context, tenant, user string, tok *oauth2.Token) error {
	sealed, err := Seal(s.Key, tok)
	if err != nil {
		return err
	}
	return s.Store.PutMailToken(ctx, tenant, user, sealed, time.Now())
}

// Token returns a user's token, or ErrNoMailAccess.
func (s StoredTokens) Token(ctx context.Context, tenant, user string) (*oauth2.Token, error) {
	sealed, err := s.Store.GetMailToken(ctx, tenant, user)
	if err != nil {
		return nil, ErrNoMailAccess
	}
	return Open(s.Key, sealed)
}
