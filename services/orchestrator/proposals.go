package orchestrator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Proposals of expenses, preferences and mail imports: the server's own
// sentence for a change, built from its canonical args, never from model
// text, in the person's language; every value in it is quoted.

// money writes an amount the person typed in currency, or in the default
// currency when they named none.
func money(l lang, env Env, amount contracts.Amount, currency *string) string {
	c := env.DefaultCurrency
	if currency != nil {
		c = *currency
	}
	minor, err := amount.Minor(c)
	if err != nil {
		return l.decimal(string(amount)) + " " + c
	}
	return l.money(contracts.Money{Minor: minor, Currency: c})
}

func proposeAddExpense(args json.RawMessage, s State, env Env) string {
	l := langOf(s.Locale)
	var a contracts.AddExpenseArgs
	_ = json.Unmarshal(args, &a)
	out := l.sayf("Add expense '%s' %s", "Ajouter la dépense « %s » de %s", quote(a.Item), money(l, env, a.Amount, a.Currency))
	if a.Date != nil {
		out += l.say(" on ", " le ") + l.date(*a.Date)
	}
	if a.Category != nil {
		out += l.say(" in ", " dans la catégorie ") + quote(*a.Category)
	}
	return out + receiptNote(l, a, s) + l.say("?", " ?")
}

func proposeUpdateExpense(args json.RawMessage, s State, _ Env) string {
	l := langOf(s.Locale)
	var a contracts.UpdateExpenseArgs
	_ = json.Unmarshal(args, &a)
	var changes []string
	if a.Item != nil {
		changes = append(changes, l.sayf("item '%s'", "libellé « %s »", quote(*a.Item)))
	}
	switch {
	case a.Amount != nil && a.Currency != nil:
		changes = append(changes, l.say("amount ", "montant ")+l.decimal(string(*a.Amount))+" "+*a.Currency)
	case a.Amount != nil:
		changes = append(changes, l.say("amount ", "montant ")+l.decimal(string(*a.Amount))) // in the expense's own currency
	case a.Currency != nil:
		changes = append(changes, l.say("currency ", "devise ")+*a.Currency)
	}
	if a.Date != nil {
		changes = append(changes, "date "+l.date(*a.Date))
	}
	if a.Category != nil {
		changes = append(changes, l.say("category ", "catégorie ")+quote(*a.Category))
	}
	return l.sayf("Change expense #%d: %s?", "Modifier la dépense #%d : %s ?", a.ID, strings.Join(changes, ", "))
}

// readExpense looks up the expense an update or a deletion names.
func readExpense(args json.RawMessage) Call {
	var a struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(args, &a)
	raw, _ := json.Marshal(contracts.ListExpensesArgs{ID: &a.ID})
	return Call{Tool: contracts.ToolListExpenses, Args: raw}
}

// lookedUp is the expense args name, from the result data of the lookup
// of it; missing answers a number with no expense (or a result about
// another number, such as the lookup of a proposal whose number an edit
// changed).
func lookedUp(l lang, args, data json.RawMessage) (_ contracts.ExpenseView, missing string) {
	var a struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(args, &a)
	var out contracts.ExpenseList
	if err := json.Unmarshal(data, &out); err != nil || out.ID != a.ID || len(out.Expenses) != 1 || out.Expenses[0].ID != a.ID {
		if out.ID != a.ID {
			out.Nearby = nil
		}
		out.ID = a.ID
		return contracts.ExpenseView{}, noExpense(l, out)
	}
	return out.Expenses[0], ""
}

// seenDelete is a deletion's sentence showing the expense it deletes.
func seenDelete(args, data json.RawMessage, s State, _ Env) (summary, missing string) {
	l := langOf(s.Locale)
	e, missing := lookedUp(l, args, data)
	if missing != "" {
		return "", missing
	}
	return l.sayf("Delete expense #%d: %s?", "Supprimer la dépense #%d : %s ?", e.ID, expenseWords(l, e)), ""
}

// seenUpdate is an update's sentence showing the expense it changes and
// each changed field before and after.
func seenUpdate(args, data json.RawMessage, s State, env Env) (summary, missing string) {
	l := langOf(s.Locale)
	e, missing := lookedUp(l, args, data)
	if missing != "" {
		return "", missing
	}
	var u contracts.UpdateExpenseArgs
	_ = json.Unmarshal(args, &u)
	changes := cmp.Or(strings.Join(changedFields(l, e, u, env), ", "), l.say("nothing", "rien"))
	return l.sayf("Change expense #%d (%s): %s?", "Modifier la dépense #%d (%s) : %s ?", e.ID, expenseWords(l, e), changes), ""
}

// changedFields shows each field an update changes as before → after.
func changedFields(l lang, e contracts.ExpenseView, u contracts.UpdateExpenseArgs, env Env) []string {
	var out []string
	if u.Item != nil {
		out = append(out, l.sayf("item '%s' → '%s'", "libellé « %s » → « %s »", quote(e.Item), quote(*u.Item)))
	}
	switch {
	case u.Amount != nil:
		currency := cmp.Or(u.Currency, &e.Amount.Currency)
		out = append(out, l.say("amount ", "montant ")+fmt.Sprintf("%s → %s", l.money(e.Amount), money(l, env, *u.Amount, currency)))
	case u.Currency != nil:
		out = append(out, l.say("currency ", "devise ")+fmt.Sprintf("%s → %s", e.Amount.Currency, *u.Currency))
	}
	if u.Date != nil {
		out = append(out, fmt.Sprintf("date %s → %s", l.date(e.Date), l.date(*u.Date)))
	}
	if u.Category != nil {
		out = append(out, l.say("category ", "catégorie ")+fmt.Sprintf("%s → %s", quote(cmp.Or(e.Category, l.say("none", "aucune"))), quote(*u.Category)))
	}
	return out
}

func proposeDeleteExpense(args json.RawMessage, s State, _ Env) string {
	var a contracts.DeleteExpenseArgs
	_ = json.Unmarshal(args, &a)
	return langOf(s.Locale).sayf("Delete expense #%d?", "Supprimer la dépense #%d ?", a.ID)
}

func proposePreferences(args json.RawMessage, s State, _ Env) string {
	l := langOf(s.Locale)
	var a contracts.SetPreferencesArgs
	_ = json.Unmarshal(args, &a)
	deref := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	p := contracts.Preferences{Currency: deref(a.Currency), Timezone: deref(a.Timezone), DateOrder: deref(a.DateOrder), Language: deref(a.Language)}
	return l.sayf("Set your %s?", "Enregistrer ces réglages : %s ?", describePreferences(l, p))
}

// proposeFetch names the message an import reads from, when it is the
// one the person just found in their mail, and warns about a sender they
// never imported from. Subject, sender, file names and previews come from
// whoever sent the mail: quoted, none can hide or restyle the rest.
func proposeFetch(args json.RawMessage, s State, _ Env) string {
	l := langOf(s.Locale)
	var a contracts.FetchEmailAttachmentsArgs
	_ = json.Unmarshal(args, &a)
	var m contracts.MailSummary
	if raw, ok := s.Memory["entities.message"]; ok && json.Unmarshal(raw, &m) == nil && m.ID == a.MessageID {
		out := l.sayf("Import %s from \"%s\" (%s), sent by %s?", "Importer %s de « %s » (%s), envoyé par %s ?",
			strings.Join(quoteAll(m.Attachments), ", "), quote(m.Subject), l.day(m.Date), quote(m.From))
		if len(m.Previews) > 0 {
			out += " " + strings.Join(quoteAll(m.Previews), ". ") + "."
		}
		if m.NewSender {
			out += newSenderWarning(l)
		}
		return out
	}
	return importAttached(l)
}

// importAttached is an import's proposal when the message is not known.
func importAttached(l lang) string {
	return l.say("Import the statements attached to that message?", "Importer les relevés joints à ce message ?")
}

// newSenderWarning ends an import's proposal from a sender never
// imported from.
func newSenderWarning(l lang) string {
	return l.say(" You have never imported a statement from this sender before: check that it really is your bank.",
		" Vous n'avez jamais importé de relevé de cet expéditeur : vérifiez qu'il s'agit bien de votre banque.")
}
