package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// UserSettings are a user's own defaults; an empty field is not set.
type UserSettings struct {
	TenantID  string
	UserID    string
	Currency  string // ISO 4217
	Timezone  string // IANA
	DateOrder string // dmy, mdy or ymd
	Language  string // en or fr: the language of answers
	UpdatedAt time.Time
}

// GetUserSettings returns the user's settings; a user who set nothing gets
// empty ones, not an error.
func (s *Store) GetUserSettings(ctx context.Context, tenantID, userID string) (UserSettings, error) {
	u := UserSettings{TenantID: tenantID, UserID: userID}
	err := s.readRow(ctx, `SELECT currency, timezone, date_order, language, updated_at FROM user_settings WHERE tenant_id = ? AND user_id = ?`, []any{tenantID, userID},
		&u.Currency, &u.Timezone, &u.DateOrder, &u.Language, timeCol{&u.UpdatedAt})
	if err := notFound(err); err != nil && !errors.Is(err, ErrNotFound) {
		return UserSettings{}, fmt.Errorf("get user settings: %w", err)
	}
	return u, nil
}

// PutUserSettings stores the non-empty fields of u over the user's
// settings and returns them all.
func (s *Store) PutUserSettings(ctx context.Context, u UserSettings) (UserSettings, error) {
	var out UserSettings
	err := s.InTx(ctx, func(tx *Store) error {
		tx.settingsChanging(u.TenantID, u.UserID)
		cur, err := tx.GetUserSettings(ctx, u.TenantID, u.UserID)
		if err != nil {
			return err
		}
		if u.Currency != "" {
			cur.Currency = u.Currency
		}
		if u.Timezone != "" {
			cur.Timezone = u.Timezone
		}
		if u.DateOrder != "" {
			cur.DateOrder = u.DateOrder
		}
		if u.Language != "" {
			cur.Language = u.Language
		}
		cur.UpdatedAt = normTime(tx.orNow(u.UpdatedAt))
		_, err = tx.exec(ctx, `INSERT INTO user_settings (tenant_id, user_id, currency, timezone, date_order, language, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (tenant_id, user_id) DO UPDATE SET currency = excluded.currency, timezone = excluded.timezone,
			date_order = excluded.date_order, language = excluded.language, updated_at = excluded.updated_at`,
			cur.TenantID, cur.UserID, cur.Currency, cur.Timezone, cur.DateOrder, cur.Language, tx.d.ts(cur.UpdatedAt))
		out = cur
		return err
	})
	if err != nil {
		return UserSettings{}, fmt.Errorf("put user settings: %w", err)
	}
	return out, nil
}
