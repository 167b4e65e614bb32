package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Expense is one expense. ID is numbered per user of a tenant from 1, so
// the ids a person sees are small and reveal nothing of anyone else's
// activity: two people of one tenant each have their own expense 1. A
// user's ids are never given again after a delete. (Ids given before
// numbering was per user keep naming the same expense; see migration 8.)
type Expense struct {
	TenantID    string
	UserID      string
	ID          int64
	Item        string
	AmountMinor int64
	Currency    string
	Date        string // YYYY-MM-DD
	Category    string
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// ExpenseFilter selects a tenant's expenses. UserID is required unless
// AllUsers is set, so a listing never spans users by omission: tools always
// list the caller's own. Other empty fields do not filter; From and To are
// inclusive dates.
type ExpenseFilter struct {
	TenantID string
	UserID   string
	// AllUsers lists every user's expenses in the tenant (operators and
	// tests; no tool sets it).
	AllUsers bool
	From, To string
	Category string
	Limit    int
}

const expenseCols = `id, user_id, item, amount_minor, currency, date, category, created_at, updated_at`

func scanExpense(tenantID string, sc interface{ Scan(...any) error }) (Expense, error) {
	e := Expense{TenantID: tenantID}
	err := sc.Scan(&e.ID, &e.UserID, &e.Item, &e.AmountMinor, &e.Currency, &e.Date, &e.Category,
		timeCol{&e.CreatedAt}, timeCol{&e.UpdatedAt})
	return e, err
}

// AddExpense stores e under its user's next expense id and returns it.
func (s *Store) AddExpense(ctx context.Context, e Expense) (Expense, error) {
	e.CreatedAt = s.orNow(e.CreatedAt)
	if e.UpdatedAt.IsZero() {
		e.UpdatedAt = e.CreatedAt
	}
	e.UpdatedAt = normTime(e.UpdatedAt)
	var err error
	if s.d.name == dialectPostgres {
		// The number and the expense in one statement, one round trip, in
		// a transaction (a tool's change) or not.
		err = s.writeRow(ctx, `WITH c AS (`+counterStep+`) INSERT INTO expenses (tenant_id, `+expenseCols+`)
			SELECT ?, c.value, ?, ?, ?, ?, ?, ?, ?, ? FROM c RETURNING id`,
			[]any{e.TenantID, e.UserID, "expense", e.TenantID, e.UserID, e.Item, e.AmountMinor, e.Currency, e.Date, e.Category,
				s.d.ts(e.CreatedAt), s.d.ts(e.UpdatedAt)}, &e.ID)
	} else {
		err = s.InTx(ctx, func(tx *Store) error {
			id, err := tx.counter(ctx, e.TenantID, e.UserID, "expense")
			if err != nil {
				return err
			}
			e.ID = id
			_, err = tx.exec(ctx, `INSERT INTO expenses (tenant_id, `+expenseCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				e.TenantID, e.ID, e.UserID, e.Item, e.AmountMinor, e.Currency, e.Date, e.Category,
				tx.d.ts(e.CreatedAt), tx.d.ts(e.UpdatedAt))
			return err
		})
	}
	if err != nil {
		return Expense{}, fmt.Errorf("add expense: %w", err)
	}
	return e, nil
}

// GetExpense returns the user's expense id in the tenant, or ErrNotFound:
// another user's expense is not found, so nobody learns that it exists.
func (s *Store) GetExpense(ctx context.Context, tenantID, userID string, id int64) (Expense, error) {
	e, err := scanExpense(tenantID, s.queryRow(ctx, `SELECT `+expenseCols+` FROM expenses WHERE tenant_id = ? AND user_id = ? AND id = ?`, tenantID, userID, id))
	if err != nil {
		return Expense{}, fmt.Errorf("get expense: %w", notFound(err))
	}
	return e, nil
}

// UpdateExpense replaces the item, amount, currency, date and category of
// expense e.ID, which must belong to e.TenantID and e.UserID (else
// NearestExpenses returns up to n of the user's expenses whose numbers are
// closest to id (ties: the lower number), in number order; the database
// picks them, however many expenses the user has.
func (s *Store) NearestExpenses(ctx context.Context, tenantID, userID string, id int64, n int) ([]Expense, error) {
	var out []Expense
	err := s.readRows(ctx, `SELECT `+expenseCols+` FROM expenses WHERE tenant_id = ? AND user_id = ?
		ORDER BY ABS(id - ?), id`+limitClause(n), []any{tenantID, userID, id},
		func(rows rowScanner) error {
			out = out[:0]
			for rows.Next() {
				e, err := scanExpense(tenantID, rows)
				if err != nil {
					return err
				}
				out = append(out, e)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("nearest expenses: %w", err)
	}
	slices.SortFunc(out, func(a, b Expense) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// ErrNotFound), and returns the stored row.
func (s *Store) UpdateExpense(ctx context.Context, e Expense) (Expense, error) {
	var out Expense
	err := s.InTx(ctx, func(tx *Store) error {
		n, err := tx.exec(ctx, `UPDATE expenses SET item = ?, amount_minor = ?, currency = ?, date = ?, category = ?, updated_at = ?
			WHERE tenant_id = ? AND user_id = ? AND id = ?`, e.Item, e.AmountMinor, e.Currency, e.Date, e.Category,
			tx.d.ts(tx.orNow(e.UpdatedAt)), e.TenantID, e.UserID, e.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		out, err = tx.GetExpense(ctx, e.TenantID, e.UserID, e.ID)
		return err
	})
	if err != nil {
		return Expense{}, fmt.Errorf("update expense: %w", err)
	}
	return out, nil
}

// DeleteExpense deletes the user's expense id in the tenant, or returns
// ErrNotFound (for another user's expense too).
func (s *Store) DeleteExpense(ctx context.Context, tenantID, userID string, id int64) error {
	n, err := s.exec(ctx, `DELETE FROM expenses WHERE tenant_id = ? AND user_id = ? AND id = ?`, tenantID, userID, id)
	if err != nil {
		return fmt.Errorf("delete expense: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("delete expense: %w", ErrNotFound)
	}
	return nil
}

// ListExpenses returns the tenant's expenses matching f, by date, id and
// user.
func (s *Store) ListExpenses(ctx context.Context, f ExpenseFilter) ([]Expense, error) {
	w := &where{}
	if f.TenantID == "" || (f.UserID == "") == !f.AllUsers {
		return nil, errors.New("list expenses: a tenant and either a user or AllUsers are required")
	}
	w.add("tenant_id = ?", f.TenantID)
	if !f.AllUsers {
		w.add("user_id = ?", f.UserID)
	}
	if f.From != "" {
		w.add("date >= ?", f.From)
	}
	if f.To != "" {
		w.add("date <= ?", f.To)
	}
	if f.Category != "" {
		w.add("category = ?", f.Category)
	}
	var out []Expense
	err := s.readRows(ctx, `SELECT `+expenseCols+` FROM expenses`+w.sql()+` ORDER BY date, id, user_id`+limitClause(f.Limit), w.args,
		func(rows rowScanner) error {
			out = out[:0]
			for rows.Next() {
				e, err := scanExpense(f.TenantID, rows)
				if err != nil {
					return err
				}
				out = append(out, e)
			}
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("list expenses: %w", err)
	}
	return out, nil
}
