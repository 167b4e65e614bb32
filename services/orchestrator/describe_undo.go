package orchestrator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The sentences of review (update_transaction) and undo (get_last_change,
// undo_change): proposals show the entry a change touches, looked up by
// the server, never model text; every value from outside is quoted.

// transactionWords names a transaction as a proposal or an answer shows it:
// "SO 12345, -£900.00 on 2026-09-01 (rent), needs review".
func transactionWords(t contracts.TransactionView) string {
	out := fmt.Sprintf("%s, %s on %s%s", quote(t.Description), FormatMoney(t.Amount), t.Date, categorySuffix(t.Category))
	if t.ReviewStatus == "needs_review" {
		out += ", needs review"
	}
	return out
}

// readTransaction looks up the transaction an update names.
func readTransaction(args json.RawMessage) Call {
	var a struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(args, &a)
	raw, _ := json.Marshal(contracts.GetTransactionsArgs{ID: &a.ID})
	return Call{Tool: contracts.ToolGetTransactions, Args: raw}
}

// noTransaction answers a lookup of a number with no transaction, naming
// the transactions whose numbers are closest.
func noTransaction(out contracts.TransactionList) string {
	msg := fmt.Sprintf("There is no transaction #%d.", out.ID)
	if len(out.Nearby) == 0 {
		return msg + " You have no imported transactions yet."
	}
	near := make([]string, len(out.Nearby))
	for i, t := range out.Nearby {
		near[i] = fmt.Sprintf("#%d %s", t.ID, transactionWords(t))
	}
	return msg + " The nearest numbers are: " + strings.Join(near, "; ") + "."
}

// seenUpdateTransaction is an update's sentence showing the transaction it
// changes and each change; missing answers a number with no transaction.
func seenUpdateTransaction(args, data json.RawMessage, _ Env) (summary, missing string) {
	var a contracts.UpdateTransactionArgs
	_ = json.Unmarshal(args, &a)
	var out contracts.TransactionList
	if err := json.Unmarshal(data, &out); err != nil || out.ID != a.ID || len(out.Transactions) != 1 || out.Transactions[0].ID != a.ID {
		if out.ID != a.ID {
			out.Nearby = nil
		}
		out.ID = a.ID
		return "", noTransaction(out)
	}
	t := out.Transactions[0]
	changes := cmp.Or(strings.Join(transactionChanges(&t, a), ", "), "nothing")
	return fmt.Sprintf("Change transaction #%d (%s): %s?", t.ID, transactionWords(t), changes), ""
}

// transactionChanges shows each change of an update; with the transaction
// as it is (t), before → after.
func transactionChanges(t *contracts.TransactionView, a contracts.UpdateTransactionArgs) []string {
	var out []string
	if a.Description != nil {
		if t != nil {
			out = append(out, fmt.Sprintf("description '%s' → '%s'", quote(t.Description), quote(*a.Description)))
		} else {
			out = append(out, "description '"+quote(*a.Description)+"'")
		}
	}
	if a.Category != nil {
		if t != nil {
			out = append(out, fmt.Sprintf("category %s → %s", quote(cmp.Or(t.Category, "none")), quote(strings.ToLower(strings.TrimSpace(*a.Category)))))
		} else {
			out = append(out, "category "+quote(*a.Category))
		}
	}
	if a.Review != nil {
		out = append(out, "mark as reviewed")
	}
	return out
}

func proposeUpdateTransaction(args json.RawMessage, _ State, _ Env) string {
	var a contracts.UpdateTransactionArgs
	_ = json.Unmarshal(args, &a)
	return fmt.Sprintf("Change transaction #%d: %s?", a.ID, cmp.Or(strings.Join(transactionChanges(nil, a), ", "), "nothing"))
}

func describeTransactionChanged(data json.RawMessage) string {
	var out contracts.TransactionChanged
	_ = json.Unmarshal(data, &out)
	return fmt.Sprintf("Updated transaction #%d: %s.", out.Transaction.ID, transactionWords(out.Transaction))
}

// entryWords names an entry a change touched: "expense #5: coffee, £3.00
// on 2026-11-20".
func entryWords(e *contracts.EntryView) string {
	if e == nil {
		return "an entry"
	}
	amount := e.Amount
	if e.Kind == "expense" {
		amount.Minor = -amount.Minor // an expense reads as what was spent
	}
	out := fmt.Sprintf("%s #%d: %s, %s on %s%s", e.Kind, e.ID, quote(e.Description), FormatMoney(amount), e.Date, categorySuffix(e.Category))
	if e.ReviewStatus == "needs_review" {
		out += ", needs review"
	}
	return out
}

// entryNamed is an entry with its content in brackets: "expense #5
// (coffee, £3.00 on 2026-11-20)".
func entryNamed(e *contracts.EntryView) string {
	if e == nil {
		return "an entry"
	}
	return fmt.Sprintf("%s #%d (%s)", e.Kind, e.ID, entryState(e))
}

// entryState is an entry's content without its name: "coffee, £3.00 on
// 2026-11-20 (food)".
func entryState(e *contracts.EntryView) string {
	if e == nil {
		return "nothing"
	}
	_, rest, _ := strings.Cut(entryWords(e), ": ")
	return rest
}

// changeWords says what a change did: "added expense #5: coffee, £3.00 on
// 2026-11-20", "imported sept.csv (30 transactions)".
func changeWords(c contracts.ChangeView) string {
	switch c.Kind {
	case "expense_add":
		return "added " + entryWords(c.After)
	case "expense_delete":
		return "deleted " + entryWords(c.Before)
	case "expense_update", "transaction_update":
		return fmt.Sprintf("changed %s (it was %s)", entryWords(c.After), entryState(c.Before))
	case "import":
		return fmt.Sprintf("imported %s (%d transaction%s)", quote(c.Filename), c.Transactions, wording.Plural(c.Transactions))
	}
	return "a change"
}

// undoWords says what undoing a change does, as a question's body: "the
// import of sept.csv: remove its 30 transactions".
func undoWords(c contracts.ChangeView) string {
	switch c.Kind {
	case "expense_add":
		return fmt.Sprintf("adding %s: delete it", entryNamed(c.After))
	case "expense_delete":
		return fmt.Sprintf("deleting %s: restore it", entryNamed(c.Before))
	case "expense_update", "transaction_update":
		name := "that entry"
		if c.After != nil {
			name = fmt.Sprintf("%s #%d", c.After.Kind, c.After.ID)
		}
		return fmt.Sprintf("the change to %s: put back %s (now %s)", name, entryState(c.Before), entryState(c.After))
	case "import":
		return fmt.Sprintf("the import of %s: remove its %d transaction%s", quote(c.Filename), c.Transactions, wording.Plural(c.Transactions))
	}
	return "that change"
}

func describeLastChange(data json.RawMessage) string {
	var out contracts.LastChange
	_ = json.Unmarshal(data, &out)
	switch {
	case out.Change == nil && out.ChangeID != 0:
		return "That change can no longer be undone."
	case out.Change == nil && out.Scope == "import":
		return "There is no import to undo."
	case out.Change == nil:
		return "There is nothing to undo."
	}
	return "Your last change: " + changeWords(*out.Change) + ". Say \"undo that\" to revert it."
}

// readChange looks up the change an undo names.
func readChange(args json.RawMessage) Call {
	var a contracts.UndoChangeArgs
	_ = json.Unmarshal(args, &a)
	raw, _ := json.Marshal(contracts.GetLastChangeArgs{ChangeID: &a.ChangeID})
	return Call{Tool: contracts.ToolGetLastChange, Args: raw}
}

// seenUndo is an undo's sentence saying exactly what it reverts; missing
// answers a change that cannot be undone (none, undone already, an undo).
func seenUndo(args, data json.RawMessage, _ Env) (summary, missing string) {
	var a contracts.UndoChangeArgs
	_ = json.Unmarshal(args, &a)
	var out contracts.LastChange
	if err := json.Unmarshal(data, &out); err != nil || out.Change == nil || out.Change.ID != a.ChangeID {
		return "", "There is nothing to undo: that change was undone already or does not exist."
	}
	return "Undo " + undoWords(*out.Change) + "?", ""
}

func proposeUndo(args json.RawMessage, _ State, _ Env) string {
	var a contracts.UndoChangeArgs
	_ = json.Unmarshal(args, &a)
	return fmt.Sprintf("Undo change %d?", a.ChangeID)
}

func describeUndone(data json.RawMessage) string {
	var out contracts.ChangeUndone
	_ = json.Unmarshal(data, &out)
	c := out.Change
	switch c.Kind {
	case "expense_add":
		return "Undone: deleted " + entryWords(c.After) + "."
	case "expense_delete":
		return "Undone: restored " + entryWords(c.Before) + "."
	case "expense_update", "transaction_update":
		if c.Before != nil {
			return fmt.Sprintf("Undone: %s #%d is back to %s.", c.Before.Kind, c.Before.ID, entryState(c.Before))
		}
	case "import":
		return fmt.Sprintf("Undone: removed the %d transaction%s imported from %s; you can import it again.", c.Transactions, wording.Plural(c.Transactions), quote(c.Filename))
	}
	return "Undone."
}
