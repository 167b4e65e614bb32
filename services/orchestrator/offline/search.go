package offline

import (
	"strings"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

var (
	// searchAsk is a request to find something: "find my Costco receipts
	// from 2020", "search for landlord", "look up Tesco".
	searchAsk = mustCompile(`(?i)^(?:please\s+|can you\s+|could you\s+)?(?:search(?:\s+for)?|find|look\s+for|look\s+up)\s+(.+?)[?.!]*$`)
	// searchWhere is "where did I pay the tax office".
	searchWhere = mustCompile(`(?i)^where\s+did\s+i\s+(?:pay|send\s+money\s+to|buy\s+from|spend\s+at)\s+(.+?)[?.!]*$`)
	// searchYear is a year the records must fall in: "from 2020", "in 2020".
	searchYear = mustCompile(`(?i)\s*\b(?:from|in|during|of)\s+((?:19|20)\d\d)\b`)
	// searchLead and searchTail are request words around what to find.
	searchLead = mustCompile(`(?i)^(?:(?:all\s+)?(?:of\s+)?(?:my|the|our)\s+|all\s+)?(?:(payments?|transactions?|spending|purchases?|receipts?|messages?|documents?|files?)\s+(?:to|for|from|at|with|about|of|mentioning)\s+)?`)
	searchTail = mustCompile(`(?i)\s+(payments?|transactions?|purchases?|receipts?|messages?|documents?|files?)$`)
	// searchMail is a mail search, which search_gmail answers instead.
	searchMail = mustCompile(`(?i)\b(e-?mails?|mail|inbox|statements?|gmail)\b`)
)

// searchIntent reads a request to find the person's own records and calls
// the search tool: what to find, which kind when the words say (payments
// are ledger entries, messages are the conversation's), and a year's
// dates when one is named. It leaves mail searches to search_gmail.
func searchIntent(text string) (orchestrator.Decision, bool) {
	text = clean(text)
	if searchMail.MatchString(text) {
		return orchestrator.Decision{}, false
	}
	var rest string
	kind := ""
	if m := searchWhere.FindStringSubmatch(text); m != nil {
		rest, kind = m[1], contracts.SearchKindEntry
	} else if m := searchAsk.FindStringSubmatch(text); m != nil {
		rest = m[1]
	} else {
		return orchestrator.Decision{}, false
	}
	args := contracts.SearchArgs{}
	if m := searchYear.FindStringSubmatch(rest); m != nil {
		from, to := m[1]+"-01-01", m[1]+"-12-31"
		args.From, args.To = &from, &to
		rest = strings.Replace(rest, m[0], "", 1)
	}
	var said []string
	if m := searchLead.FindStringSubmatch(rest); m != nil {
		said = append(said, m[1])
		rest = rest[len(m[0]):]
	}
	if m := searchTail.FindStringSubmatch(rest); m != nil {
		said = append(said, m[1])
		rest = rest[:len(rest)-len(m[0])]
	}
	for _, w := range said {
		switch w = strings.ToLower(w); {
		case strings.HasPrefix(w, "payment"), strings.HasPrefix(w, "transaction"), strings.HasPrefix(w, "purchase"), w == "spending":
			kind = contracts.SearchKindEntry
		case strings.HasPrefix(w, "message"):
			kind = contracts.SearchKindMessage
		case strings.HasPrefix(w, "document"), strings.HasPrefix(w, "file"):
			kind = contracts.SearchKindDocument
		}
	}
	rest = strings.Trim(strings.TrimSpace(rest), `"'`)
	rest = strings.TrimPrefix(strings.TrimPrefix(rest, "the "), "The ")
	if rest == "" || len(rest) > 200 {
		return orchestrator.Decision{}, false
	}
	args.Query = rest
	if kind != "" {
		args.Only = &kind
	}
	return call(contracts.ToolSearch, args), true
}
