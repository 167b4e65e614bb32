package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Change kinds: what an entry of the change log records.
const (
	ChangeExpenseAdd        = "expense_add"
	ChangeExpenseUpdate     = "expense_update"
	ChangeExpenseDelete     = "expense_delete"
	ChangeTransactionUpdate = "transaction_update"
	ChangeImport            = "import"
	ChangeUndo              = "undo"
)

// Change is one approved change to a person's ledger, written in the same
// database transaction as the change. Entity names what it changed (an
// expense or transaction number, or an import's document id). Before and
// After are the entry's images as JSON: an Expense or a Transaction (nil
// where the entry did not exist), and for an import After is an
// ImportImage. An undo's Undoes names the change it reverted; UndoneBy is
// set on a change an undo reverted, and only once.
type Change struct {
	ID        int64
	TenantID  string
	UserID    string
	CallID    string
	Kind      string
	Entity    string
	Label     string
	Before    json.RawMessage
	After     json.RawMessage
	Undoes    int64
	UndoneBy  int64
	CreatedAt time.Time
}

// ImportImage is what an import added: its document and the transactions
// it stored (not those it skipped as already imported).
type ImportImage struct {
	DocumentID   string
	Filename     string
	Transactions []Transaction
}

// ErrAlreadyUndone is returned by UndoChange for a change undone before.
var ErrAlreadyUndone = errors.New("already undone")

// ErrNotUndoable is returned by UndoChange for an undo: an undo is not
// itself undone (there is no redo; the person makes the change again).
var ErrNotUndoable = errors.New("an undo cannot be undone")

// ChangedSinceError is returned by UndoChange when an entry the change
// touched is no longer as the change left it: nothing is reverted.
// Entry is "expense" or "transaction"; Gone says it no longer exists
// (or, for a deletion, that it exists again).
type ChangedSinceError struct {
	Entry       string
	ID          int64
	Description string
	Gone        bool
}

func (e *ChangedSinceError) Error() string {
	return fmt.Sprintf("%s #%d changed since", e.Entry, e.ID)
}

const changeCols = `id, user_id, call_id, kind, entity, label, before, after, undoes, undone_by, created_at`

func scanChange(tenantID string, sc interface{ Scan(...any) error }) (Change, error) {
	c := Change{TenantID: tenantID}
	var undoes, undoneBy *int64
	err := sc.Scan(&c.ID, &c.UserID, &c.CallID, &c.Kind, &c.Entity, &c.Label, jsonCol{&c.Before}, jsonCol{&c.After},
		&undoes, &undoneBy, timeCol{&c.CreatedAt})
	if undoes != nil {
		c.Undoes = *undoes
	}
	if undoneBy != nil {
		c.UndoneBy = *undoneBy
	}
	return c, err
}

func optID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

// image encodes an entry's image; nil stays NULL.
func image[T any](v *T) json.RawMessage {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	return b
}

// RecordChange appends c to the change log and returns it with its id.
// Call it on the transaction of the change it records.
func (s *Store) RecordChange(ctx context.Context, c Change) (Change, error) {
	c.CreatedAt = s.orNow(c.CreatedAt)
	err := s.writeRow(ctx, `INSERT INTO change_log (tenant_id, user_id, call_id, kind, entity, label, before, after, undoes, undone_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?) RETURNING id`,
		[]any{c.TenantID, c.UserID, c.CallID, c.Kind, c.Entity, c.Label, jsonArg(c.Before), jsonArg(c.After), optID(c.Undoes),
			s.d.ts(c.CreatedAt)}, &c.ID)
	if err != nil {
		return Change{}, fmt.Errorf("record change: %w", err)
	}
	return c, nil
}

// RecordExpenseChange records an expense's add (before nil), update or
// deletion (after nil) by call callID.
func (s *Store) RecordExpenseChange(ctx context.Context, callID string, before, after *Expense, at time.Time) error {
	e := after
	kind := ChangeExpenseUpdate
	switch {
	case before == nil:
		kind = ChangeExpenseAdd
	case after == nil:
		kind, e = ChangeExpenseDelete, before
	}
	_, err := s.RecordChange(ctx, Change{TenantID: e.TenantID, UserID: e.UserID, CallID: callID, Kind: kind,
		Entity: strconv.FormatInt(e.ID, 10), Label: e.Item, Before: image(before), After: image(after), CreatedAt: at})
	return err
}

// RecordTransactionUpdate records a change to a transaction by call callID.
func (s *Store) RecordTransactionUpdate(ctx context.Context, callID string, before, after Transaction, at time.Time) error {
	_, err := s.RecordChange(ctx, Change{TenantID: after.TenantID, UserID: after.UserID, CallID: callID, Kind: ChangeTransactionUpdate,
		Entity: strconv.FormatInt(after.ID, 10), Label: after.Description, Before: image(&before), After: image(&after), CreatedAt: at})
	return err
}

// RecordImport records the import of doc as a whole: the transactions it
// added, which are those stored under its id. Call it on the transaction
// that stores them. An import that added none (every line imported
// before) is not recorded: undoing it would change nothing.
func (s *Store) RecordImport(ctx context.Context, doc Document, at time.Time) error {
	txs, err := s.documentTransactions(ctx, doc.TenantID, doc.UserID, doc.ID)
	if err != nil || len(txs) == 0 {
		return err // an import that added nothing has nothing to undo
	}
	img := ImportImage{DocumentID: doc.ID, Filename: doc.Filename, Transactions: txs}
	_, err = s.RecordChange(ctx, Change{TenantID: doc.TenantID, UserID: doc.UserID, CallID: "import-" + doc.ID, Kind: ChangeImport,
		Entity: doc.ID, Label: doc.Filename, After: image(&img), CreatedAt: at})
	return err
}

// GetChange returns the user's change id, or ErrNotFound.
func (s *Store) GetChange(ctx context.Context, tenantID, userID string, id int64) (Change, error) {
	c, err := scanChange(tenantID, s.queryRow(ctx, `SELECT `+changeCols+` FROM change_log WHERE tenant_id = ? AND user_id = ? AND id = ?`,
		tenantID, userID, id))
	if err != nil {
		return Change{}, fmt.Errorf("get change: %w", notFound(err))
	}
	return c, nil
}

// LastChange returns the user's latest change that an undo may revert: not
// an undo, not undone already; of kind when kind is not empty. ErrNotFound
// when there is none.
func (s *Store) LastChange(ctx context.Context, tenantID, userID, kind string) (Change, error) {
	w := &where{}
	w.add("tenant_id = ?", tenantID)
	w.add("user_id = ?", userID)
	w.add("kind <> ?", ChangeUndo)
	w.add("undone_by IS NULL")
	if kind != "" {
		w.add("kind = ?", kind)
	}
	c, err := scanChange(tenantID, s.queryRow(ctx, `SELECT `+changeCols+` FROM change_log`+w.sql()+` ORDER BY id DESC LIMIT 1`, w.args...))
	if err != nil {
		return Change{}, fmt.Errorf("last change: %w", notFound(err))
	}
	return c, nil
}

// UndoChange reverts the user's change id by call callID, all in one
// transaction, and returns the undo's own entry of the change log. It
// reverts exactly what the change did: an add is deleted, a deletion
// restored under the same number, an update given back its before image,
// an import's transactions (only those) removed with its document, so that
// the file can be imported again. When any entry is no longer as the
// change left it, it returns a *ChangedSinceError and changes nothing; a
// change undone before gives ErrAlreadyUndone, an undo ErrNotUndoable, an
// unknown id ErrNotFound.
func (s *Store) UndoChange(ctx context.Context, tenantID, userID string, id int64, callID string, at time.Time) (Change, error) {
	var undo Change
	err := s.InTx(ctx, func(tx *Store) error {
		c, err := tx.GetChange(ctx, tenantID, userID, id)
		if err != nil {
			return err
		}
		switch {
		case c.Kind == ChangeUndo:
			return ErrNotUndoable
		case c.UndoneBy != 0:
			return ErrAlreadyUndone
		}
		undo, err = tx.RecordChange(ctx, Change{TenantID: tenantID, UserID: userID, CallID: callID, Kind: ChangeUndo,
			Entity: c.Entity, Label: c.Label, Before: c.After, After: c.Before, Undoes: c.ID, CreatedAt: at})
		if err != nil {
			return err
		}
		// The guard against a second undo of one change: of two racing
		// undos, the second finds undone_by set and reverts nothing.
		n, err := tx.exec(ctx, `UPDATE change_log SET undone_by = ? WHERE tenant_id = ? AND user_id = ? AND id = ? AND undone_by IS NULL`,
			undo.ID, tenantID, userID, c.ID)
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrAlreadyUndone
		}
		return tx.revert(ctx, c, at)
	})
	if err != nil {
		return Change{}, fmt.Errorf("undo change %d: %w", id, err)
	}
	return undo, nil
}

// revert undoes c on the transaction s. Each statement that reverts an
// entry matches the entry as the change left it, so an entry changed by
// anyone since (even by a transaction committed a moment before) is never
// overwritten: the statement touches no row and the undo is refused.
func (s *Store) revert(ctx context.Context, c Change, at time.Time) error {
	switch c.Kind {
	case ChangeExpenseAdd, ChangeExpenseUpdate, ChangeExpenseDelete:
		var before, after *Expense
		if err := decodeImages(c, &before, &after); err != nil {
			return err
		}
		return s.revertExpense(ctx, c, before, after, at)
	case ChangeTransactionUpdate:
		var before, after *Transaction
		if err := decodeImages(c, &before, &after); err != nil {
			return err
		}
		if before == nil || after == nil {
			return fmt.Errorf("change %d has no image", c.ID)
		}
		n, err := s.exec(ctx, `UPDATE transactions SET description = ?, category = ?, review_status = ?
			WHERE tenant_id = ? AND user_id = ? AND id = ? AND `+transactionAsLeft,
			append([]any{before.Description, before.Category, before.ReviewStatus, c.TenantID, c.UserID, after.ID}, transactionImage(*after)...)...)
		if err != nil {
			return err
		}
		if n == 0 {
			return s.transactionChanged(ctx, c, *after)
		}
		return nil
	case ChangeImport:
		var img *ImportImage
		if err := decodeImages(c, nil, &img); err != nil {
			return err
		}
		if img == nil {
			return fmt.Errorf("change %d has no image", c.ID)
		}
		return s.revertImport(ctx, c, *img)
	}
	return fmt.Errorf("change %d: unknown kind %q", c.ID, c.Kind)
}

func decodeImages[T any](c Change, before, after **T) error {
	for _, p := range []struct {
		raw json.RawMessage
		dst **T
	}{{c.Before, before}, {c.After, after}} {
		if p.dst == nil || len(p.raw) == 0 || string(p.raw) == "null" {
			continue
		}
		*p.dst = new(T)
		if err := json.Unmarshal(p.raw, *p.dst); err != nil {
			return fmt.Errorf("change %d image: %w", c.ID, err)
		}
	}
	return nil
}

// expenseAsLeft matches an expense row to an image (expenseImage's args).
const expenseAsLeft = `item = ? AND amount_minor = ? AND currency = ? AND date = ? AND category = ?`

func expenseImage(e Expense) []any {
	return []any{e.Item, e.AmountMinor, e.Currency, e.Date, e.Category}
}

// transactionAsLeft matches a transaction row to an image
// (transactionImage's args).
const transactionAsLeft = `document_id = ? AND date = ? AND amount_minor = ? AND currency = ? AND description = ? AND vendor = ?
	AND category = ? AND review_status = ?`

func transactionImage(t Transaction) []any {
	return []any{t.DocumentID, t.Date, t.AmountMinor, t.Currency, t.Description, t.Vendor, t.Category, t.ReviewStatus}
}

// transactionChanged is the refusal for a transaction no longer as left.
func (s *Store) transactionChanged(ctx context.Context, c Change, t Transaction) error {
	_, err := s.GetTransaction(ctx, c.TenantID, c.UserID, t.ID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	return &ChangedSinceError{Entry: "transaction", ID: t.ID, Description: t.Description, Gone: err != nil}
}

func (s *Store) revertExpense(ctx context.Context, c Change, before, after *Expense, at time.Time) error {
	ref := after
	if ref == nil {
		ref = before
	}
	if ref == nil {
		return fmt.Errorf("change %d has no image", c.ID)
	}
	var n int64
	var err error
	switch {
	case after == nil: // a deletion: the same number comes back, unless it exists again
		n, err = s.exec(ctx, `INSERT INTO expenses (tenant_id, `+expenseCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT DO NOTHING`,
			c.TenantID, before.ID, c.UserID, before.Item, before.AmountMinor, before.Currency, before.Date, before.Category,
			s.d.ts(before.CreatedAt), s.d.ts(s.orNow(at)))
	case before == nil: // an add
		n, err = s.exec(ctx, `DELETE FROM expenses WHERE tenant_id = ? AND user_id = ? AND id = ? AND `+expenseAsLeft,
			append([]any{c.TenantID, c.UserID, after.ID}, expenseImage(*after)...)...)
	default:
		n, err = s.exec(ctx, `UPDATE expenses SET item = ?, amount_minor = ?, currency = ?, date = ?, category = ?, updated_at = ?
			WHERE tenant_id = ? AND user_id = ? AND id = ? AND `+expenseAsLeft,
			append([]any{before.Item, before.AmountMinor, before.Currency, before.Date, before.Category, s.d.ts(s.orNow(at)),
				c.TenantID, c.UserID, after.ID}, expenseImage(*after)...)...)
	}
	if err != nil || n == 1 {
		return err
	}
	_, err = s.GetExpense(ctx, c.TenantID, c.UserID, ref.ID)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	// A deletion's expense exists again; another's is gone or changed.
	return &ChangedSinceError{Entry: "expense", ID: ref.ID, Description: ref.Item, Gone: exists == (after == nil)}
}

// revertImport removes the transactions an import added, each only if it
// is still as imported, and its document.
func (s *Store) revertImport(ctx context.Context, c Change, img ImportImage) error {
	for _, t := range img.Transactions {
		n, err := s.exec(ctx, `DELETE FROM transactions WHERE tenant_id = ? AND user_id = ? AND id = ? AND `+transactionAsLeft,
			append([]any{c.TenantID, c.UserID, t.ID}, transactionImage(t)...)...)
		if err != nil {
			return err
		}
		if n == 0 {
			return s.transactionChanged(ctx, c, t)
		}
	}
	_, err := s.exec(ctx, `DELETE FROM documents WHERE tenant_id = ? AND user_id = ? AND id = ?`, c.TenantID, c.UserID, img.DocumentID)
	return err
}

// UndoneImports counts the user's undone imports of document docID and of
// the documents that imported the same file again after an undo (docID
// followed by "-" and a number): the next import of the file takes a new
// id, so that nothing keyed by the document id (its job, its
// notification) is taken for the earlier, undone one.
func (s *Store) UndoneImports(ctx context.Context, tenantID, userID, docID string) (int, error) {
	var n int
	err := s.readRow(ctx, `SELECT COUNT(*) FROM change_log WHERE tenant_id = ? AND user_id = ? AND kind = ?
		AND undone_by IS NOT NULL AND (entity = ? OR entity LIKE ? ESCAPE '\')`,
		[]any{tenantID, userID, ChangeImport, docID, likeEscape(docID) + "-%"}, &n)
	if err != nil {
		return 0, fmt.Errorf("undone imports: %w", err)
	}
	return n, nil
}
