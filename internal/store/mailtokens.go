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
