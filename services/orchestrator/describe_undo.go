package orchestrator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// The sentences of review (update_transaction) and undo (get_last_change,
// undo_change): proposals show the entry a change touches, looked up by
// the server, never model text; every value from outside is quoted.

// transactionWords names a transaction as a proposal or an answer shows it:
// "SO 12345, -£900.00 on 2026-09-01 (rent), needs review".
func transactionWords(l lang, t contracts.TransactionView) string {
	out := l.sayf("%s, %s on %s%s", "%s, %s le %s%s", quote(t.Description), l.money(t.Amount), l.date(t.Date), categorySuffix(t.Category))
	if t.ReviewStatus == "needs_review" {
		out += l.say(", needs review", ", à vérifier")
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
func noTransaction(l lang, out contracts.TransactionList) string {
	msg := l.sayf("There is no transaction #%d.", "Il n'y a pas de transaction #%d.", out.ID)
	if len(out.Nearby) == 0 {
		return msg + l.say(" You have no imported transactions yet.", " Vous n'avez encore importé aucune transaction.")
	}
	near := make([]string, len(out.Nearby))
	for i, t := range out.Nearby {
		near[i] = fmt.Sprintf("#%d %s", t.ID, transactionWords(l, t))
	}
	return msg + l.say(" The nearest numbers are: ", " Les numéros les plus proches : ") + strings.Join(near, "; ") + "."
}

// seenUpdateTransaction is an update's sentence showing the transaction it
// changes and each change; missing answers a number with no transaction.
func seenUpdateTransaction(args, data json.RawMessage, s State, _ Env) (summary, missing string) {
	l := langOf(s.Locale)
	var a contracts.UpdateTransactionArgs
	_ = json.Unmarshal(args, &a)
	var out contracts.TransactionList
	if err := json.Unmarshal(data, &out); err != nil || out.ID != a.ID || len(out.Transactions) != 1 || out.Transactions[0].ID != a.ID {
		if out.ID != a.ID {
			out.Nearby = nil
		}
		out.ID = a.ID
		return "", noTransaction(l, out)
	}
	t := out.Transactions[0]
	changes := cmp.Or(strings.Join(transactionChanges(l, &t, a), ", "), l.say("nothing", "rien"))
	return l.sayf("Change transaction #%d (%s): %s?", "Modifier la transaction #%d (%s) : %s ?", t.ID, transactionWords(l, t), changes), ""
}

// transactionChanges shows each change of an update; with the transaction
// as it is (t), before → after.
func transactionChanges(l lang, t *contracts.TransactionView, a contracts.UpdateTransactionArgs) []string {
	var out []string
	if a.Description != nil {
		if t != nil {
			out = append(out, l.sayf("description '%s' → '%s'", "libellé « %s » → « %s »", quote(t.Description), quote(*a.Description)))
		} else {
			out = append(out, l.sayf("description '%s'", "libellé « %s »", quote(*a.Description)))
		}
	}
	if a.Category != nil {
		if t != nil {
			out = append(out, l.say("category ", "catégorie ")+fmt.Sprintf("%s → %s", quote(cmp.Or(t.Category, l.say("none", "aucune"))), quote(strings.ToLower(strings.TrimSpace(*a.Category)))))
		} else {
			out = append(out, l.say("category ", "catégorie ")+quote(*a.Category))
		}
	}
	if a.Review != nil {
		out = append(out, l.say("mark as reviewed", "marquer comme vérifiée"))
	}
	return out
}

func proposeUpdateTransaction(args json.RawMessage, s State, _ Env) string {
	l := langOf(s.Locale)
	var a contracts.UpdateTransactionArgs
	_ = json.Unmarshal(args, &a)
	return l.sayf("Change transaction #%d: %s?", "Modifier la transaction #%d : %s ?", a.ID, cmp.Or(strings.Join(transactionChanges(l, nil, a), ", "), l.say("nothing", "rien")))
}

func describeTransactionChanged(l lang, data json.RawMessage) string {
	var out contracts.TransactionChanged
	_ = json.Unmarshal(data, &out)
	return l.sayf("Updated transaction #%d: %s.", "Transaction #%d modifiée : %s.", out.Transaction.ID, transactionWords(l, out.Transaction))
}

// entryWords names an entry a change touched: "expense #5: coffee, £3.00
// on 2026-11-20".
func entryWords(l lang, e *contracts.EntryView) string {
	if e == nil {
		return anEntry.in(l)
	}
	amount := e.Amount
	if e.Kind == "expense" {
		amount.Minor = -amount.Minor // an expense reads as what was spent
	}
	out := fmt.Sprintf("%s #%d%s%s", l.kind(e.Kind), e.ID, l.say(": ", " : "), entryContent(l, e, amount))
	if e.ReviewStatus == "needs_review" {
		out += l.say(", needs review", ", à vérifier")
	}
	return out
}

// entryContent is an entry's content: "coffee, £3.00 on 2026-11-20 (food)".
func entryContent(l lang, e *contracts.EntryView, amount contracts.Money) string {
	return l.sayf("%s, %s on %s%s", "%s, %s le %s%s", quote(e.Description), l.money(amount), l.date(e.Date), categorySuffix(e.Category))
}

// anEntry stands for an entry a change names but does not show.
var anEntry = phrase{"an entry", "une opération"}

// entryNamed is an entry with its content in brackets: "expense #5
// (coffee, £3.00 on 2026-11-20)".
func entryNamed(l lang, e *contracts.EntryView) string {
	if e == nil {
		return anEntry.in(l)
	}
	return fmt.Sprintf("%s #%d (%s)", l.kind(e.Kind), e.ID, entryState(l, e))
}

// entryState is an entry's content without its name: "coffee, £3.00 on
// 2026-11-20 (food)".
func entryState(l lang, e *contracts.EntryView) string {
	if e == nil {
		return l.say("nothing", "rien")
	}
	_, rest, _ := strings.Cut(entryWords(l, e), l.say(": ", " : "))
	return rest
}

// changeWords says what a change did: "added expense #5: coffee, £3.00 on
// 2026-11-20", "imported sept.csv (30 transactions)".
func changeWords(l lang, c contracts.ChangeView) string {
	switch c.Kind {
	case "expense_add":
		return l.say("added ", "ajout de la ") + entryWords(l, c.After)
	case "expense_delete":
		return l.say("deleted ", "suppression de la ") + entryWords(l, c.Before)
	case "expense_update", "transaction_update":
		return l.sayf("changed %s (it was %s)", "modification de la %s (avant : %s)", entryWords(l, c.After), entryState(l, c.Before))
	case "import":
		return l.sayf("imported %s (%s)", "import de %s (%s)", quote(c.Filename), l.count(c.Transactions, nTransaction))
	}
	return l.say("a change", "une modification")
}

// undoWords says what undoing a change does, as a question's body: "the
// import of sept.csv: remove its 30 transactions".
func undoWords(l lang, c contracts.ChangeView) string {
	switch c.Kind {
	case "expense_add":
		return l.sayf("adding %s: delete it", "l'ajout de la %s : la supprimer", entryNamed(l, c.After))
	case "expense_delete":
		return l.sayf("deleting %s: restore it", "la suppression de la %s : la rétablir", entryNamed(l, c.Before))
	case "expense_update", "transaction_update":
		name := l.say("that entry", "cette opération")
		if c.After != nil {
			name = fmt.Sprintf("%s #%d", l.kind(c.After.Kind), c.After.ID)
		}
		return l.sayf("the change to %s: put back %s (now %s)", "la modification de la %s : remettre %s (actuellement %s)", name, entryState(l, c.Before), entryState(l, c.After))
	case "import":
		return l.sayf("the import of %s: remove its %s", "l'import de %s : en retirer les %s", quote(c.Filename), l.count(c.Transactions, nTransaction))
	}
	return l.say("that change", "cette modification")
}

func describeLastChange(l lang, data json.RawMessage) string {
	var out contracts.LastChange
	_ = json.Unmarshal(data, &out)
	switch {
	case out.Change == nil && out.ChangeID != 0:
		return l.say("That change can no longer be undone.", "Cette modification ne peut plus être annulée.")
	case out.Change == nil && out.Scope == "import":
		return l.say("There is no import to undo.", "Il n'y a aucun import à annuler.")
	case out.Change == nil:
		return l.say("There is nothing to undo.", "Il n'y a rien à annuler.")
	}
	return l.sayf("Your last change: %s. Say \"undo that\" to revert it.", "Votre dernière modification : %s. Dites « annule ça » pour revenir en arrière.", changeWords(l, *out.Change))
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
func seenUndo(args, data json.RawMessage, s State, _ Env) (summary, missing string) {
	l := langOf(s.Locale)
	var a contracts.UndoChangeArgs
	_ = json.Unmarshal(args, &a)
	var out contracts.LastChange
	if err := json.Unmarshal(data, &out); err != nil || out.Change == nil || out.Change.ID != a.ChangeID {
		return "", l.say("There is nothing to undo: that change was undone already or does not exist.",
			"Il n'y a rien à annuler : cette modification a déjà été annulée ou n'existe pas.")
	}
	return l.sayf("Undo %s?", "Annuler %s ?", undoWords(l, *out.Change)), ""
}

func proposeUndo(args json.RawMessage, s State, _ Env) string {
	var a contracts.UndoChangeArgs
	_ = json.Unmarshal(args, &a)
	return langOf(s.Locale).sayf("Undo change %d?", "Annuler la modification %d ?", a.ChangeID)
}

func describeUndone(l lang, data json.RawMessage) string {
	var out contracts.ChangeUndone
	_ = json.Unmarshal(data, &out)
	c := out.Change
	switch c.Kind {
	case "expense_add":
		return l.say("Undone: deleted ", "Annulé : j'ai supprimé la ") + entryWords(l, c.After) + "."
	case "expense_delete":
		return l.say("Undone: restored ", "Annulé : j'ai rétabli la ") + entryWords(l, c.Before) + "."
	case "expense_update", "transaction_update":
		if c.Before != nil {
			return l.sayf("Undone: %s #%d is back to %s.", "Annulé : la %s #%d est revenue à %s.", l.kind(c.Before.Kind), c.Before.ID, entryState(l, c.Before))
		}
	case "import":
		n := l.count(c.Transactions, nTransaction)
		if l == french {
			what := "les " + n + " importées"
			if c.Transactions == 1 {
				what = "la transaction importée"
			}
			return fmt.Sprintf("Annulé : j'ai retiré %s de %s ; vous pouvez l'importer à nouveau.", what, quote(c.Filename))
		}
		return fmt.Sprintf("Undone: removed the %s imported from %s; you can import it again.", n, quote(c.Filename))
	}
	return l.say("Undone.", "Annulé.")
}
