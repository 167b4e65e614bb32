package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// describeLedgerList reads list_ledger's entries aloud, newest first, each
// with what it is and its number, so that a change can name it.
func describeLedgerList(l lang, data json.RawMessage) string {
	var out contracts.LedgerList
	_ = json.Unmarshal(data, &out)
	on := ""
	if out.Query != "" {
		on = l.say(" matching ", " correspondant à ") + quote(out.Query)
	}
	when := rangeWords(l, out.Range, out.From, out.To)
	if len(out.Entries) == 0 {
		return l.sayf("Your ledger has nothing%s %s.", "Vos comptes n'ont rien%s %s.", on, when)
	}
	var b strings.Builder
	b.WriteString(l.sayf("Your ledger%s %s, newest first (%s):\n", "Vos comptes%s %s, du plus récent au plus ancien (%s) :\n", on, when, l.count(len(out.Entries), nEntry)))
	for _, e := range out.Entries {
		cat := ""
		if e.Category != "" {
			cat = " (" + quote(e.Category) + ")"
		}
		fmt.Fprintf(&b, "- %s %s, %s%s · %s #%d\n", l.date(e.Date), quote(e.Description), l.money(e.Amount), cat, l.kind(e.Kind), e.ID)
	}
	if out.More {
		b.WriteString(l.say("There are more: ask for a shorter period or some words.\n", "Il y en a d'autres : demandez une période plus courte ou quelques mots.\n"))
	}
	return strings.TrimRight(b.String(), "\n")
}
