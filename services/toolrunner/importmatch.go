package toolrunner

import (
	"fmt"
	"strings"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
)

// matchDetail says, after an import's own detail, which new lines were
// linked to an expense typed by hand, which only might be (and were not
// linked), and how many were transfers between the person's accounts.
// Empty when there is none of these.
func matchDetail(res store.ImportOutcome, lines []store.Transaction) string {
	var parts []string
	if n := len(res.Linked); n > 0 {
		parts = append(parts, fmt.Sprintf("%d linked to what you typed (%s)", n, strings.Join(matchWords(res.Linked, lines), "; ")))
	}
	if n := len(res.Doubtful); n > 0 {
		parts = append(parts, fmt.Sprintf("%d kept apart though it may be what you typed (%s)", n, strings.Join(matchWords(res.Doubtful, lines), "; ")))
	}
	if res.Transfers > 0 {
		parts = append(parts, fmt.Sprintf("%d transfer%s between your accounts", res.Transfers, wording.Plural(res.Transfers)))
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// matchWords shows each match as the bank's line and the expense typed
// by hand, each with its description, amount and date.
func matchWords(ms []store.ImportMatch, lines []store.Transaction) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if m.Line < 0 || m.Line >= len(lines) {
			continue
		}
		l, e := lines[m.Line], m.Expense
		out = append(out, fmt.Sprintf("'%s' %s on %s and your '%s' %s on %s",
			contracts.PlainText(l.Description), FormatMinor(l.AmountMinor, l.Currency), l.Date,
			contracts.PlainText(e.Item), FormatMinor(-e.AmountMinor, e.Currency), e.Date))
	}
	return out
}
