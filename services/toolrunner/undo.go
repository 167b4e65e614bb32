package toolrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// This file is the review of imported transactions (update_transaction)
// and undo (get_last_change, undo_change). Every approved change to the
// ledger is written to the store's change log in the transaction of the
// change itself, so an undo reverts exactly one change, or refuses.

func transactionView(t store.Transaction) contracts.TransactionView {
	return contracts.TransactionView{ID: t.ID, Date: t.Date, Description: t.Description, Vendor: t.Vendor,
		Amount: contracts.Money{Minor: t.AmountMinor, Currency: t.Currency}, Category: t.Category, ReviewStatus: t.ReviewStatus}
}

func transactionNotFound(id int64) error {
	return fail(contracts.CodeNotFound, fmt.Sprintf("There is no transaction #%d.", id))
}

// lookupTransaction lists the caller's transaction id alone, whatever its
// date; when there is none, it lists nothing and names the caller's
// transactions whose numbers are closest to id, in number order.
func lookupTransaction(ctx context.Context, tx Tx, c Call, id int64) (Output, error) {
	out := contracts.TransactionList{ID: id, Transactions: []contracts.TransactionView{}, Totals: []contracts.Money{}}
	t, err := tx.GetTransaction(ctx, c.Caller.TenantID, c.Caller.UserID, id)
	switch {
	case err == nil:
		v := transactionView(t)
		out.Transactions = append(out.Transactions, v)
		out.Totals = totals([]contracts.Money{v.Amount})
		out.Count = 1
		n := int64(1)
		return Output{Data: out, Total: &n}, nil
	case !errors.Is(err, store.ErrNotFound):
		return Output{}, err
	}
	rows, err := tx.NearestTransactions(ctx, c.Caller.TenantID, c.Caller.UserID, id, nearbyCount)
	if err != nil {
		return Output{}, err
	}
	for _, t := range rows {
		out.Nearby = append(out.Nearby, transactionView(t))
	}
	n := int64(0)
	return Output{Data: out, Total: &n}, nil
}

// updateTransaction fixes an imported transaction's category or
// description, or clears its review flag, and logs the change.
func updateTransaction(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.UpdateTransactionArgs)
	if a.Category == nil && a.Description == nil && a.Review == nil {
		return Output{}, fail(contracts.CodeInvalidArgs, "Nothing to change: give a new category or description, or review \"clear\".")
	}
	before, err := tx.GetTransaction(ctx, c.Caller.TenantID, c.Caller.UserID, a.ID)
	if errors.Is(err, store.ErrNotFound) {
		return Output{}, transactionNotFound(a.ID)
	} else if err != nil {
		return Output{}, err
	}
	t := before
	if a.Category != nil {
		t.Category = strings.ToLower(strings.TrimSpace(*a.Category))
	}
	if a.Description != nil {
		t.Description = strings.TrimSpace(*a.Description)
	}
	if a.Review != nil && *a.Review == "clear" {
		t.ReviewStatus = store.ReviewOK
	}
	updated, err := tx.UpdateTransaction(ctx, t)
	if errors.Is(err, store.ErrNotFound) {
		return Output{}, transactionNotFound(a.ID)
	} else if err != nil {
		return Output{}, err
	}
	if err := tx.RecordTransactionUpdate(ctx, c.ID, before, updated, c.Now); err != nil {
		return Output{}, err
	}
	return Output{Data: contracts.TransactionChanged{Transaction: transactionView(updated)}}, nil
}

// getLastChange names the latest change an undo would revert, or none.
func getLastChange(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.GetLastChangeArgs)
	out := contracts.LastChange{Scope: "any"}
	kind := ""
	if a.Scope != nil && *a.Scope == "import" {
		out.Scope, kind = "import", store.ChangeImport
	}
	var ch store.Change
	var err error
	if a.ChangeID != nil {
		out.ChangeID = *a.ChangeID
		ch, err = tx.GetChange(ctx, c.Caller.TenantID, c.Caller.UserID, *a.ChangeID)
		if err == nil && (ch.Kind == store.ChangeUndo || ch.UndoneBy != 0) {
			err = store.ErrNotFound // nothing an undo may revert
		}
	} else {
		ch, err = tx.LastChange(ctx, c.Caller.TenantID, c.Caller.UserID, kind)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Output{Data: out}, nil
	case err != nil:
		return Output{}, err
	}
	v, err := changeView(ch)
	if err != nil {
		return Output{}, err
	}
	out.Change = &v
	return Output{Data: out}, nil
}

// undoChange reverts one change. The store refuses, and nothing changes,
// when an entry is no longer as the change left it, when the change was
// undone already, and for an undo (there is no redo).
func undoChange(ctx context.Context, tx Tx, c Call) (Output, error) {
	a := c.Args.(*contracts.UndoChangeArgs)
	ch, err := tx.GetChange(ctx, c.Caller.TenantID, c.Caller.UserID, a.ChangeID)
	if errors.Is(err, store.ErrNotFound) {
		return Output{}, fail(contracts.CodeNotFound, "There is no such change to undo; nothing was changed.")
	} else if err != nil {
		return Output{}, err
	}
	v, err := changeView(ch)
	if err != nil {
		return Output{}, err
	}
	_, err = tx.UndoChange(ctx, c.Caller.TenantID, c.Caller.UserID, a.ChangeID, c.ID, c.Now)
	var changed *store.ChangedSinceError
	switch {
	case errors.As(err, &changed):
		return Output{}, fail(contracts.CodeProposalInvalid, changedSince(changed))
	case errors.Is(err, store.ErrAlreadyUndone):
		return Output{}, fail(contracts.CodeProposalInvalid, "That change was already undone; nothing was changed.")
	case errors.Is(err, store.ErrNotUndoable):
		return Output{}, fail(contracts.CodeProposalInvalid, "An undo cannot itself be undone; make the change again instead. Nothing was changed.")
	case err != nil:
		return Output{}, err
	}
	return Output{Data: contracts.ChangeUndone{Change: v}}, nil
}

// changedSince is the refusal naming the entry that changed.
func changedSince(e *store.ChangedSinceError) string {
	what := "changed"
	if e.Gone {
		what = "deleted"
		if e.Entry == "expense" {
			what = "added again"
		}
	}
	return fmt.Sprintf("%s #%d '%s' was %s after that change, so I didn't undo it; nothing was changed.",
		capitalize(e.Entry), e.ID, contracts.PlainText(e.Description), what)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// changeView reads a change-log entry as the person is shown it.
func changeView(ch store.Change) (contracts.ChangeView, error) {
	v := contracts.ChangeView{ID: ch.ID, Kind: ch.Kind, CreatedAt: ch.CreatedAt.UTC()}
	switch ch.Kind {
	case store.ChangeExpenseAdd, store.ChangeExpenseUpdate, store.ChangeExpenseDelete:
		var err error
		if v.Before, err = entryOf(ch.Before, expenseEntry); err != nil {
			return v, err
		}
		if v.After, err = entryOf(ch.After, expenseEntry); err != nil {
			return v, err
		}
	case store.ChangeTransactionUpdate:
		var err error
		if v.Before, err = entryOf(ch.Before, transactionEntry); err != nil {
			return v, err
		}
		if v.After, err = entryOf(ch.After, transactionEntry); err != nil {
			return v, err
		}
	case store.ChangeImport:
		var img store.ImportImage
		if err := json.Unmarshal(ch.After, &img); err != nil {
			return v, fmt.Errorf("change %d: %w", ch.ID, err)
		}
		v.Filename, v.Transactions = img.Filename, len(img.Transactions)
	}
	return v, nil
}

func entryOf[T any](raw json.RawMessage, view func(T) contracts.EntryView) (*contracts.EntryView, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var x T
	if err := json.Unmarshal(raw, &x); err != nil {
		return nil, fmt.Errorf("change image: %w", err)
	}
	e := view(x)
	return &e, nil
}

func expenseEntry(e store.Expense) contracts.EntryView {
	return contracts.EntryView{Kind: "expense", ID: e.ID, Description: e.Item, Amount: contracts.Money{Minor: -e.AmountMinor, Currency: e.Currency},
		Date: e.Date, Category: e.Category}
}

func transactionEntry(t store.Transaction) contracts.EntryView {
	return contracts.EntryView{Kind: "transaction", ID: t.ID, Description: t.Description, Amount: contracts.Money{Minor: t.AmountMinor, Currency: t.Currency},
		Date: t.Date, Category: t.Category, ReviewStatus: t.ReviewStatus}
}

// recordImport logs an import as a whole, in the transaction that stored
// its transactions, so that "undo the last import" removes exactly those.
func recordImport(ctx context.Context, tx *store.Store, doc store.Document, at time.Time) error {
	return tx.RecordImport(ctx, doc, at)
}

// importAgainID is the id a file's document takes: id, or, when imports
// of the file were undone, id numbered after them ("doc-…-2"), so that its
// import job and notification are new ones rather than taken for the
// undone import's.
func importAgainID(ctx context.Context, tx Tx, tenantID, userID, id string) (string, error) {
	n, err := tx.UndoneImports(ctx, tenantID, userID, id)
	if err != nil || n == 0 {
		return id, err
	}
	return fmt.Sprintf("%s-%d", id, n+1), nil
}
