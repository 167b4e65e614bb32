package orchestrator

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
)

// describeLedgerList reads list_ledger's entries aloud, newest first, each
// with what it is and its number, so that a change can name it.
func describeLedgerList(data json.RawMessage) string {
	var out contracts.LedgerList
	_ = json.Unmarshal(data, &out)
	on := ""
	if out.Query != "" {
		on = " matching " + quote(out.Query)
	}
	when := rangeWords(out.Range, out.From, out.To)
	if len(out.Entries) == 0 {
		return fmt.Sprintf("Your ledger has nothing%s %s.", on, when)
	}
	var b strings.Builder
	entries := "entries"
	if len(out.Entries) == 1 {
		entries = "entry"
	}
	fmt.Fprintf(&b, "Your ledger%s %s, newest first (%d %s):\n", on, when, len(out.Entries), entries)
	for _, e := range out.Entries {
		cat := ""
		if e.Category != "" {
			cat = " (" + quote(e.Category) + ")"
		}
		fmt.Fprintf(&b, "- %s %s, %s%s · %s #%d\n", e.Date, quote(e.Description), FormatMoney(e.Amount), cat, e.Kind, e.ID)
	}
	if out.More {
		b.WriteString("There are more: ask for a shorter period or some words.\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
