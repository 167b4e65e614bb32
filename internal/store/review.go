package store

import (
	"cmp"
	"context"
	"fmt"
	"slices"
)

// transactionCols are the columns scanTransaction reads, in its order.
const transactionCols = `id, user_id, document_id, date, amount_minor, currency, description, vendor, category,
	fitid, dedupe_key, review_status, created_at`

func scanTransaction(tenantID string, sc interface{ Scan(...any) error }) (Transaction, error) {
	t := Transaction{TenantID: tenantID}
	err := sc.Scan(&t.ID, &t.UserID, &t.DocumentID, &t.Date, &t.AmountMinor, &t.Currency, &t.Description,
		&t.Vendor, &t.Category, &t.FITID, &t.DedupeKey, &t.ReviewStatus, timeCol{&t.CreatedAt})
	return t, err
}

// GetTransaction returns the user's transaction id, or ErrNotFound: another
// user's transaction is not found, so nobody learns that it exists.
func (s *Store) GetTransaction(ctx context.Context, tenantID, userID string, id int64) (Transaction, error) {
	t, err := scanTransaction(tenantID, s.queryRow(ctx, `SELECT `+transactionCols+` FROM transactions
		WHERE tenant_id = ? AND user_id = ? AND id = ?`, tenantID, userID, id))
	if err != nil {
		return Transaction{}, fmt.Errorf("get transaction: %w", notFound(err))
	}
	return t, nil
}

// NearestTransactions returns up to n of the user's transactions whose
// numbers are closest to id (ties: the lower number), in number order.
func (s *Store) NearestTransactions(ctx context.Context, tenantID, userID string, id int64, n int) ([]Transaction, error) {
	var out []Transaction
	err := s.readRows(ctx, `SELECT `+transactionCols+` FROM transactions WHERE tenant_id = ? AND user_id = ?
		ORDER BY ABS(id - ?), id`+limitClause(n), []any{tenantID, userID, id},
		func(rows rowScanner) error {
			out = out[:0]
			for rows.Next() {
				t, err := scanTransaction(tenantID, rows)
				if err != nil {
					return err
				}
				out = append(out, t)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("nearest transactions: %w", err)
	}
	slices.SortFunc(out, func(a, b Transaction) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// UpdateTransaction replaces the description, category and review status
// of transaction t.ID, which must belong to t.TenantID and t.UserID (else
// ErrNotFound), and returns the stored row. Date, amount and the rest are
// what the bank said and stay.
func (s *Store) UpdateTransaction(ctx context.Context, t Transaction) (Transaction, error) {
	var out Transaction
	err := s.InTx(ctx, func(tx *Store) error {
		n, err := tx.exec(ctx, `UPDATE transactions SET description = ?, category = ?, review_status = ?
			WHERE tenant_id = ? AND user_id = ? AND id = ?`, t.Description, t.Category, t.ReviewStatus, t.TenantID, t.UserID, t.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		out, err = tx.GetTransaction(ctx, t.TenantID, t.UserID, t.ID)
		return err
	})
	if err != nil {
		return Transaction{}, fmt.Errorf("update transaction: %w", err)
	}
	return out, nil
}

// documentTransactions are the user's transactions that document docID
// added, by id.
func (s *Store) documentTransactions(ctx context.Context, tenantID, userID, docID string) ([]Transaction, error) {
	var out []Transaction
	err := s.readRows(ctx, `SELECT `+transactionCols+` FROM transactions WHERE tenant_id = ? AND user_id = ? AND document_id = ?
		ORDER BY id`, []any{tenantID, userID, docID},
		func(rows rowScanner) error {
			out = out[:0]
			for rows.Next() {
				t, err := scanTransaction(tenantID, rows)
				if err != nil {
					return err
				}
				out = append(out, t)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("document transactions: %w", err)
	}
	return out, nil
}
