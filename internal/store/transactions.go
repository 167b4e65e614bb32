package store

import (
	"context"
	"fmt"
	"time"
)

// Review statuses of an imported transaction.
const (
	ReviewOK    = "ok"
	ReviewNeeds = "needs_review"
)

// Transaction is one imported bank transaction. DedupeKey identifies it
// across imports (the bank's FITID, else a hash of date, amount and
// description): a user never holds two transactions with one key.
type Transaction struct {
	ID           int64
	TenantID     string
	UserID       string
	DocumentID   string
	Date         string // YYYY-MM-DD
	AmountMinor  int64  // negative for money out
	Currency     string
	Description  string
	Vendor       string
	Category     string
	FITID        string
	DedupeKey    string
	ReviewStatus string
	// Account is the bank account the statement names (MT940 :25:, OFX
	// ACCTID, camt), empty when the file does not say.
	Account string
	// TransferID is the other side of a transfer between two of the
	// person's own accounts, 0 when this is none.
	TransferID int64
	CreatedAt  time.Time
}

// TransactionFilter selects a user's transactions. Vendor matches a
// case-insensitive substring of the vendor or description.
type TransactionFilter struct {
	TenantID     string
	UserID       string
	From, To     string
	Vendor       string
	Category     string
	ReviewStatus string
	DocumentID   string
	Limit        int
}

// InsertTransactions stores txs and returns how many were new; a
// transaction whose DedupeKey the user already has is skipped.
func (s *Store) InsertTransactions(ctx context.Context, txs []Transaction) (int, error) {
	inserted := 0
	err := s.InTx(ctx, func(tx *Store) error {
		inserted = 0
		for _, t := range txs {
			n, err := tx.exec(ctx, `INSERT INTO transactions (tenant_id, user_id, document_id, date, amount_minor, currency,
				description, vendor, category, fitid, dedupe_key, review_status, account, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, dedupe_key) DO NOTHING`,
				t.TenantID, t.UserID, t.DocumentID, t.Date, t.AmountMinor, t.Currency, t.Description, t.Vendor,
				t.Category, t.FITID, t.DedupeKey, t.ReviewStatus, t.Account, tx.d.ts(tx.orNow(t.CreatedAt)))
			if err != nil {
				return err
			}
			inserted += int(n)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("insert transactions: %w", err)
	}
	return inserted, nil
}

// HasTransaction reports whether the user already holds a transaction with
// the dedupe key.
func (s *Store) HasTransaction(ctx context.Context, tenantID, userID, dedupeKey string) (bool, error) {
	var n int
	err := s.queryRow(ctx, `SELECT COUNT(*) FROM transactions WHERE tenant_id = ? AND user_id = ? AND dedupe_key = ?`,
		tenantID, userID, dedupeKey).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("find transaction: %w", err)
	}
	return n > 0, nil
}

// ListTransactions returns the user's transactions matching f, by date then id.
func (s *Store) ListTransactions(ctx context.Context, f TransactionFilter) ([]Transaction, error) {
	w := &where{}
	w.add("tenant_id = ?", f.TenantID)
	w.add("user_id = ?", f.UserID)
	if f.From != "" {
		w.add("date >= ?", f.From)
	}
	if f.To != "" {
		w.add("date <= ?", f.To)
	}
	if f.Vendor != "" {
		p := "%" + likeEscape(toLower(f.Vendor)) + "%"
		w.add(`(LOWER(vendor) LIKE ? ESCAPE '\' OR LOWER(description) LIKE ? ESCAPE '\')`, p, p)
	}
	if f.Category != "" {
		w.add("category = ?", f.Category)
	}
	if f.ReviewStatus != "" {
		w.add("review_status = ?", f.ReviewStatus)
	}
	if f.DocumentID != "" {
		w.add("document_id = ?", f.DocumentID)
	}
	rows, err := s.query(ctx, `SELECT id, user_id, document_id, date, amount_minor, currency, description, vendor, category,
		fitid, dedupe_key, review_status, account, COALESCE(transfer_id, 0), created_at FROM transactions`+w.sql()+` ORDER BY date, id`+limitClause(f.Limit), w.args...)
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	defer rows.Close()
	var out []Transaction
	for rows.Next() {
		t := Transaction{TenantID: f.TenantID}
		if err := rows.Scan(&t.ID, &t.UserID, &t.DocumentID, &t.Date, &t.AmountMinor, &t.Currency, &t.Description,
			&t.Vendor, &t.Category, &t.FITID, &t.DedupeKey, &t.ReviewStatus, &t.Account, &t.TransferID, timeCol{&t.CreatedAt}); err != nil {
			return nil, fmt.Errorf("list transactions: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
