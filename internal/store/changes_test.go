package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

var changeT0 = time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)

func ok[T any](t *testing.T) func(v T, err error) T {
	t.Helper()
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// addLogged adds an expense and records its add, as the add tool does.
func addLogged(t *testing.T, st *store.Store, item string, minor int64) store.Expense {
	t.Helper()
	var e store.Expense
	err := st.InTx(context.Background(), func(tx *store.Store) error {
		var err error
		e, err = tx.AddExpense(context.Background(), store.Expense{TenantID: "t", UserID: "u", Item: item, AmountMinor: minor, Currency: "GBP", Date: "2026-11-01"})
		if err != nil {
			return err
		}
		return tx.RecordExpenseChange(context.Background(), "call-add-"+item, nil, &e, changeT0)
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// importLogged stores a document with transactions described by descs and
// records the import, as the importer does.
func importLogged(t *testing.T, st *store.Store, docID string, descs ...string) []store.Transaction {
	t.Helper()
	ctx := context.Background()
	doc := store.Document{TenantID: "t", ID: docID, UserID: "u", SHA256: "sha-" + docID, Filename: docID + ".csv", MediaType: "text/csv",
		Size: 1, Content: []byte("x"), CreatedAt: changeT0}
	ok[bool](t)(func() (bool, error) { _, c, err := st.PutDocument(ctx, doc); return c, err }())
	var lines []store.Transaction
	for i, d := range descs {
		lines = append(lines, store.Transaction{TenantID: "t", UserID: "u", DocumentID: docID, Date: "2026-09-01", AmountMinor: -int64(100 * (i + 1)),
			Currency: "GBP", Description: d, DedupeKey: docID + d, ReviewStatus: store.ReviewNeeds})
	}
	err := st.InTx(ctx, func(tx *store.Store) error {
		if _, err := tx.InsertTransactions(ctx, lines); err != nil {
			return err
		}
		if err := tx.UpdateDocumentStatus(ctx, "t", docID, store.DocumentImported, "", len(lines), changeT0); err != nil {
			return err
		}
		return tx.RecordImport(ctx, doc, changeT0)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ok[[]store.Transaction](t)(st.ListTransactions(ctx, store.TransactionFilter{TenantID: "t", UserID: "u", DocumentID: docID}))
}

func descriptions(t *testing.T, st *store.Store) []string {
	t.Helper()
	var out []string
	for _, tx := range ok[[]store.Transaction](t)(st.ListTransactions(context.Background(), store.TransactionFilter{TenantID: "t", UserID: "u"})) {
		out = append(out, tx.Description)
	}
	slices.Sort(out)
	return out
}

func expenseItems(t *testing.T, st *store.Store) string {
	t.Helper()
	var out []string
	for _, e := range ok[[]store.Expense](t)(st.ListExpenses(context.Background(), store.ExpenseFilter{TenantID: "t", UserID: "u"})) {
		out = append(out, fmt.Sprintf("#%d %s %d %s", e.ID, e.Item, e.AmountMinor, e.Category))
	}
	return fmt.Sprint(out)
}

// Undoing the last import removes its transactions and only those: typed
// expenses and another import's transactions stay, and the same file can
// be stored again afterwards.
func TestUndoImportRemovesOnlyItsTransactions(t *testing.T) {
	t.Parallel()
	storetest.OnEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		addLogged(t, st, "coffee", 300)
		importLogged(t, st, "aug", "RENT", "GYM")
		importLogged(t, st, "sept", "TESCO", "SHELL", "NETFLIX")
		last := ok[store.Change](t)(st.LastChange(ctx, "t", "u", store.ChangeImport))
		if last.Kind != store.ChangeImport || last.Entity != "sept" || last.Label != "sept.csv" {
			t.Fatalf("last import = %+v, want sept", last)
		}
		undo := ok[store.Change](t)(st.UndoChange(ctx, "t", "u", last.ID, "call-undo", changeT0))
		if undo.Kind != store.ChangeUndo || undo.Undoes != last.ID {
			t.Fatalf("undo entry = %+v", undo)
		}
		if got, want := fmt.Sprint(descriptions(t, st)), "[GYM RENT]"; got != want {
			t.Fatalf("transactions after undoing sept = %s, want %s", got, want)
		}
		if got, want := expenseItems(t, st), "[#1 coffee 300 ]"; got != want {
			t.Fatalf("expenses after undoing an import = %s, want %s", got, want)
		}
		if _, err := st.GetDocument(ctx, "t", "sept"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("sept's document after undo: %v, want not found", err)
		}
		if n := ok[int](t)(st.UndoneImports(ctx, "t", "u", "sept")); n != 1 {
			t.Fatalf("undone imports of sept = %d, want 1", n)
		}
		if n := ok[int](t)(st.UndoneImports(ctx, "t", "u", "aug")); n != 0 {
			t.Fatalf("undone imports of aug = %d, want 0", n)
		}
		// The file can be imported again: the same content is stored anew.
		if _, created, err := st.PutDocument(ctx, store.Document{TenantID: "t", ID: "sept2", UserID: "u", SHA256: "sha-sept", Filename: "sept.csv",
			MediaType: "text/csv", Size: 1, Content: []byte("x")}); err != nil || !created {
			t.Fatalf("re-importing sept after undo: created=%v err=%v", created, err)
		}
		// The next import to undo is the earlier one.
		if next := ok[store.Change](t)(st.LastChange(ctx, "t", "u", store.ChangeImport)); next.Entity != "aug" {
			t.Fatalf("after undoing sept the last import is %q, want aug", next.Entity)
		}
	})
}

// Undoing an expense change reverts exactly it and leaves other expenses
// alone: an add is deleted, an update given its before image, a deletion
// restored under the same number.
func TestUndoExpenseChanges(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(t *testing.T, st *store.Store, e store.Expense)
		want   string
	}{
		{"add", func(t *testing.T, st *store.Store, e store.Expense) {}, "[#1 tea 250 ]"},
		{"update", func(t *testing.T, st *store.Store, e store.Expense) {
			after := e
			after.Item, after.AmountMinor, after.Category = "lunch", 1200, "food"
			logged(t, st, func(tx *store.Store) error {
				got, err := tx.UpdateExpense(context.Background(), after)
				if err != nil {
					return err
				}
				return tx.RecordExpenseChange(context.Background(), "call-upd", &e, &got, changeT0)
			})
		}, "[#1 tea 250  #2 coffee 300 ]"},
		{"delete", func(t *testing.T, st *store.Store, e store.Expense) {
			logged(t, st, func(tx *store.Store) error {
				if err := tx.DeleteExpense(context.Background(), "t", "u", e.ID); err != nil {
					return err
				}
				return tx.RecordExpenseChange(context.Background(), "call-del", &e, nil, changeT0)
			})
		}, "[#1 tea 250  #2 coffee 300 ]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storetest.OnEach(t, func(t *testing.T, st *store.Store) {
				ctx := context.Background()
				addLogged(t, st, "tea", 250)
				e := addLogged(t, st, "coffee", 300)
				c.change(t, st, e)
				last := ok[store.Change](t)(st.LastChange(ctx, "t", "u", ""))
				ok[store.Change](t)(st.UndoChange(ctx, "t", "u", last.ID, "call-undo", changeT0))
				if got := expenseItems(t, st); got != c.want {
					t.Fatalf("expenses after undo = %s, want %s", got, c.want)
				}
			})
		})
	}
}

func logged(t *testing.T, st *store.Store, fn func(tx *store.Store) error) {
	t.Helper()
	if err := st.InTx(context.Background(), fn); err != nil {
		t.Fatal(err)
	}
}

// An entry that changed after the change being undone is never
// overwritten: the undo is refused, names the entry, and changes nothing.
func TestUndoRefusesAnEntryChangedSince(t *testing.T) {
	t.Parallel()
	storetest.OnEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := addLogged(t, st, "coffee", 300)
		addChange := ok[store.Change](t)(st.LastChange(ctx, "t", "u", ""))
		edited := e
		edited.AmountMinor = 450
		logged(t, st, func(tx *store.Store) error {
			got, err := tx.UpdateExpense(ctx, edited)
			if err != nil {
				return err
			}
			return tx.RecordExpenseChange(ctx, "call-upd", &e, &got, changeT0)
		})
		_, err := st.UndoChange(ctx, "t", "u", addChange.ID, "call-undo", changeT0)
		var cs *store.ChangedSinceError
		if !errors.As(err, &cs) || cs.Entry != "expense" || cs.ID != e.ID {
			t.Fatalf("undoing an add whose expense changed since: %v, want expense #%d changed since", err, e.ID)
		}
		if got, want := expenseItems(t, st), "[#1 coffee 450 ]"; got != want {
			t.Fatalf("expenses after a refused undo = %s, want %s", got, want)
		}

		txs := importLogged(t, st, "sept", "TESCO", "SHELL")
		imp := ok[store.Change](t)(st.LastChange(ctx, "t", "u", store.ChangeImport))
		before := txs[1]
		after := before
		after.Category, after.ReviewStatus = "fuel", store.ReviewOK
		logged(t, st, func(tx *store.Store) error {
			got, err := tx.UpdateTransaction(ctx, after)
			if err != nil {
				return err
			}
			return tx.RecordTransactionUpdate(ctx, "call-tx", before, got, changeT0)
		})
		_, err = st.UndoChange(ctx, "t", "u", imp.ID, "call-undo-imp", changeT0)
		if !errors.As(err, &cs) || cs.Entry != "transaction" || cs.ID != before.ID || cs.Description != "SHELL" {
			t.Fatalf("undoing an import one of whose transactions changed since: %v, want transaction #%d changed since", err, before.ID)
		}
		if got, want := fmt.Sprint(descriptions(t, st)), "[SHELL TESCO]"; got != want {
			t.Fatalf("transactions after a refused undo = %s, want %s", got, want)
		}
		// A refused undo leaves the change to undo later.
		if c := ok[store.Change](t)(st.GetChange(ctx, "t", "u", imp.ID)); c.UndoneBy != 0 {
			t.Fatalf("a refused undo marked the import undone by %d", c.UndoneBy)
		}
	})
}

// A change is undone once: a second undo of it (a new call after the
// first committed) is refused and reverts nothing again, and an undo is
// not itself undone.
func TestUndoIsNeverAppliedTwice(t *testing.T) {
	t.Parallel()
	storetest.OnEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := addLogged(t, st, "coffee", 300)
		logged(t, st, func(tx *store.Store) error {
			if err := tx.DeleteExpense(ctx, "t", "u", e.ID); err != nil {
				return err
			}
			return tx.RecordExpenseChange(ctx, "call-del", &e, nil, changeT0)
		})
		del := ok[store.Change](t)(st.LastChange(ctx, "t", "u", ""))
		undo := ok[store.Change](t)(st.UndoChange(ctx, "t", "u", del.ID, "call-undo-1", changeT0))
		if _, err := st.UndoChange(ctx, "t", "u", del.ID, "call-undo-2", changeT0); !errors.Is(err, store.ErrAlreadyUndone) {
			t.Fatalf("second undo of one change: %v, want ErrAlreadyUndone", err)
		}
		if _, err := st.UndoChange(ctx, "t", "u", undo.ID, "call-undo-3", changeT0); !errors.Is(err, store.ErrNotUndoable) {
			t.Fatalf("undo of an undo: %v, want ErrNotUndoable", err)
		}
		if got, want := expenseItems(t, st), "[#1 coffee 300 ]"; got != want {
			t.Fatalf("expenses after one restore and two refused undos = %s, want %s", got, want)
		}
		// The restored expense keeps its number; the next undo is of the add.
		next := ok[store.Change](t)(st.LastChange(ctx, "t", "u", ""))
		if next.Kind != store.ChangeExpenseAdd {
			t.Fatalf("after undoing the delete, the last change is %q, want the add", next.Kind)
		}
		if _, err := st.UndoChange(ctx, "t", "u", 999, "call-x", changeT0); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("undo of an unknown change: %v, want not found", err)
		}
		if _, err := st.LastChange(ctx, "t", "someone-else", ""); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another user's last change: %v, want not found", err)
		}
	})
}

// An import that added nothing (every line imported before) is not a
// change: "undo the last import" then means the one that added them.
func TestAnImportThatAddedNothingIsNotUndone(t *testing.T) {
	t.Parallel()
	storetest.OnEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		importLogged(t, st, "sept", "TESCO")
		doc := store.Document{TenantID: "t", ID: "copy", UserID: "u", SHA256: "sha-copy", Filename: "copy.csv", MediaType: "text/csv", Size: 1, Content: []byte("y")}
		if _, _, err := st.PutDocument(ctx, doc); err != nil {
			t.Fatal(err)
		}
		logged(t, st, func(tx *store.Store) error {
			n, err := tx.InsertTransactions(ctx, []store.Transaction{{TenantID: "t", UserID: "u", DocumentID: "copy", Date: "2026-09-01", AmountMinor: -100,
				Currency: "GBP", Description: "TESCO", DedupeKey: "septTESCO", ReviewStatus: store.ReviewOK}})
			if err != nil || n != 0 {
				return fmt.Errorf("inserted %d of a line imported before (%v)", n, err)
			}
			return tx.RecordImport(ctx, doc, changeT0)
		})
		if last := ok[store.Change](t)(st.LastChange(ctx, "t", "u", store.ChangeImport)); last.Entity != "sept" {
			t.Fatalf("last import = %q, want sept (copy added nothing)", last.Entity)
		}
	})
}

// Two undos of one change at once (two replicas, two yeses): one reverts
// it, the other is refused; the change is never reverted twice.
func TestConcurrentUndosRevertOnce(t *testing.T) {
	t.Parallel()
	storetest.OnEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		importLogged(t, st, "aug", "RENT")
		importLogged(t, st, "sept", "TESCO", "SHELL")
		last := ok[store.Change](t)(st.LastChange(ctx, "t", "u", store.ChangeImport))
		errs := make(chan error, 2)
		for i := range 2 {
			go func() {
				_, err := st.UndoChange(ctx, "t", "u", last.ID, fmt.Sprintf("call-%d", i), changeT0)
				errs <- err
			}()
		}
		var done, refused int
		for range 2 {
			switch err := <-errs; {
			case err == nil:
				done++
			case errors.Is(err, store.ErrAlreadyUndone):
				refused++
			default:
				t.Fatalf("concurrent undo: %v", err)
			}
		}
		if done != 1 || refused != 1 {
			t.Fatalf("%d undos applied and %d refused, want 1 and 1", done, refused)
		}
		if got, want := fmt.Sprint(descriptions(t, st)), "[RENT]"; got != want {
			t.Fatalf("transactions after two concurrent undos = %s, want %s", got, want)
		}
	})
}
