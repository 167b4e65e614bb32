package toolrunner

import (
	"context"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// setPreferences stores the user's own defaults (after their yes, like
// every change): the currency for amounts and statements that name none,
// their time zone, how they write dates and the language of answers.
func setPreferences(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.SetPreferencesArgs)
	if a.Currency == nil && a.Timezone == nil && a.DateOrder == nil && a.Language == nil {
		return Output{}, fail(contracts.CodeInvalidArgs, "Nothing to change: give a currency, a time zone, a date order or a language.")
	}
	u := store.UserSettings{TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, UpdatedAt: c.Now}
	if a.Currency != nil {
		u.Currency = *a.Currency
	}
	if a.Timezone != nil {
		u.Timezone = *a.Timezone
	}
	if a.DateOrder != nil {
		u.DateOrder = *a.DateOrder
	}
	if a.Language != nil {
		u.Language = *a.Language
	}
	saved, err := tx.PutUserSettings(ctx, u)
	if err != nil {
		return Output{}, err
	}
	return Output{Data: contracts.Preferences{Currency: saved.Currency, Timezone: saved.Timezone, DateOrder: saved.DateOrder, Language: saved.Language}}, nil
}

// userCurrency is the currency of an amount that names none: the user's
// own default, else purser's.
func userCurrency(ctx context.Context, tx Tx, c Call) (string, error) {
	u, err := tx.GetUserSettings(ctx, c.Caller.TenantID, c.Caller.UserID)
	if err != nil {
		return "", err
	}
	if u.Currency != "" {
		return u.Currency, nil
	}
	return defaultCurrency, nil
}

// StatementHints reads a user's defaults for statements that leave the
// currency or the day/month order open: their settings.
func StatementHints(st interface {
	GetUserSettings(ctx context.Context, tenantID, userID string) (store.UserSettings, error)
}) func(ctx context.Context, tenantID, userID string) ParseHints {
	return func(ctx context.Context, tenantID, userID string) ParseHints {
		u, err := st.GetUserSettings(ctx, tenantID, userID)
		if err != nil {
			return ParseHints{}
		}
		return ParseHints{DefaultCurrency: u.Currency, DateOrder: u.DateOrder}
	}
}
