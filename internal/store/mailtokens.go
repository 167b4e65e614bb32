package store

import (
	"context"
	"fmt"
	"time"
)

// PutMailToken stores a user's sealed mail token, replacing any earlier one.
// The store never sees the token unsealed.
func (s *Store) PutMailToken(ctx context.Context, tenantID, userID string, sealed []byte, at time.Time) error {
	_, err := s.exec(ctx, `INSERT INTO mail_tokens (tenant_id, user_id, sealed, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (tenant_id, user_id) DO UPDATE SET sealed = excluded.sealed, updated_at = excluded.updated_at`,
		tenantID, userID, blobArg(sealed), s.d.ts(s.orNow(at)))
	if err != nil {
		return fmt.Errorf("put mail token: %w", err)
	}
	return nil
}

// GetMailToken returns a user's sealed mail token, or ErrNotFound.
func (s *Store) GetMailToken(ctx context.Context, tenantID, userID string) ([]byte, error) {
	var sealed []byte
	err := s.queryRow(ctx, `SELECT sealed FROM mail_tokens WHERE tenant_id = ? AND user_id = ?`, tenantID, userID).Scan(&sealed)
	if err != nil {
		return nil, fmt.Errorf("get mail token: %w", notFound(err))
	}
	return sealed, nil
}

// ReplaceMailToken stores next in place of a user's sealed mail token only
// if the stored one is still prev, and reports whether it did: a token
// refreshed by one replica never overwrites one stored meanwhile by a
// reconnect or another refresh.
func (s *Store) ReplaceMailToken(ctx context.Context, tenantID, userID string, prev, next []byte, at time.Time) (bool, error) {
	n, err := s.exec(ctx, `UPDATE mail_tokens SET sealed = ?, updated_at = ? WHERE tenant_id = ? AND user_id = ? AND sealed = ?`,
		blobArg(next), s.d.ts(s.orNow(at)), tenantID, userID, blobArg(prev))
	if err != nil {
		return false, fmt.Errorf("replace mail token: %w", err)
	}
	return n > 0, nil
}

// DeleteMailToken removes a user's sealed mail token and reports whether
// there was one.
func (s *Store) DeleteMailToken(ctx context.Context, tenantID, userID string) (bool, error) {
	n, err := s.exec(ctx, `DELETE FROM mail_tokens WHERE tenant_id = ? AND user_id = ?`, tenantID, userID)
	if err != nil {
		return false, fmt.Errorf("delete mail token: %w", err)
	}
	return n > 0, nil
}

// DeleteMailTokenIf removes a user's sealed mail token only if it is still
// sealed, and reports whether it did: a broken token is dropped without
// dropping a new one a reconnect stored meanwhile.
func (s *Store) DeleteMailTokenIf(ctx context.Context, tenantID, userID string, sealed []byte) (bool, error) {
	n, err := s.exec(ctx, `DELETE FROM mail_tokens WHERE tenant_id = ? AND user_id = ? AND sealed = ?`, tenantID, userID, blobArg(sealed))
	if err != nil {
		return false, fmt.Errorf("delete mail token: %w", err)
	}
	return n > 0, nil
}
