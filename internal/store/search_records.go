package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// LedgerEntryOf returns one of the user's ledger entries by kind
// (LedgerExpense or LedgerTransaction) and id: the record a search
// result or citation names. Another person's entry is ErrNotFound.
func (s *Store) LedgerEntryOf(ctx context.Context, tenantID, userID, kind string, id int64) (LedgerEntry, error) {
	var e LedgerEntry
	err := s.readRows(ctx, `SELECT `+ledgerCols+` FROM ledger_entries WHERE tenant_id = ? AND user_id = ? AND kind = ? AND id = ?`,
		[]any{tenantID, userID, kind, id}, func(rows rowScanner) error {
			found := false
			for rows.Next() {
				var err error
				if e, err = scanLedgerEntry(rows, tenantID); err != nil {
					return err
				}
				found = true
			}
			if !found {
				return sql.ErrNoRows
			}
			return nil
		})
	if errors.Is(err, sql.ErrNoRows) {
		return LedgerEntry{}, fmt.Errorf("ledger entry %s-%d: %w", kind, id, ErrNotFound)
	}
	if err != nil {
		return LedgerEntry{}, fmt.Errorf("ledger entry: %w", err)
	}
	return e, nil
}

// LedgerEntriesOfDocument returns up to limit of the user's entries read
// from one document, by date.
func (s *Store) LedgerEntriesOfDocument(ctx context.Context, tenantID, userID, documentID string, limit int) ([]LedgerEntry, error) {
	out, err := s.ledgerRows(ctx, tenantID, `SELECT `+ledgerCols+` FROM ledger_entries WHERE tenant_id = ? AND user_id = ? AND document_id = ?
		ORDER BY date, id LIMIT ?`, tenantID, userID, documentID, limit)
	if err != nil {
		return nil, fmt.Errorf("document entries: %w", err)
	}
	return out, nil
}
