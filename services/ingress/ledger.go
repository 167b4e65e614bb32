package ingress

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// ledgerPage is the body of GET /v1/ledger.
type ledgerPage struct {
	Entries    []contracts.LedgerEntry `json:"entries"`
	NextCursor string                  `json:"next_cursor,omitempty"`
}

// ledgerSummary is the body of GET /v1/ledger/summary.
type ledgerSummary struct {
	From       string                       `json:"from"`
	To         string                       `json:"to"`
	Count      int                          `json:"count"`
	Spending   []contracts.Money            `json:"spending"`
	Income     []contracts.Money            `json:"income"`
	ByCategory []contracts.CategorySpending `json:"by_category"`
}

// serveLedger is GET /v1/ledger?from=&to=&q=&category=&limit=&cursor=:
// one page of the caller's own ledger, newest first. Dates left out are
// the current month's ends in the caller's time zone (the notifier
// decides, from the user's settings).
func (in *Ingress) serveLedger(w http.ResponseWriter, r *http.Request) {
	in.api("ledger", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		q, ok := queryParams(w, r, "from", "to", "q", "category", "limit", "cursor")
		if !ok {
			return
		}
		from, to, ok := dateParams(w, q)
		if !ok {
			return
		}
		limit, ok := limitParam(w, r, 50)
		if !ok {
			return
		}
		req := contracts.LedgerRequest{From: from, To: to, Query: q.Get("q"), Category: q.Get("category"), Limit: limit, Cursor: q.Get("cursor")}
		if err := contracts.Validate(&req); err != nil {
			writeJSONError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
		reply, err := ask(r.Context(), in, bus.NotifierLedger(), p.TenantID, p.UserID, req)
		if err != nil {
			in.notifierFailed(w, err)
			return
		}
		page := ledgerPage{Entries: reply.Entries, NextCursor: reply.NextCursor}
		if page.Entries == nil {
			page.Entries = []contracts.LedgerEntry{}
		}
		writeJSON(w, http.StatusOK, page)
	})
}

// serveLedgerSummary is GET /v1/ledger/summary?from=&to=: the caller's
// entries, spending and income per currency, and spending per category
// over the range (by default the current month, as for /v1/ledger).
func (in *Ingress) serveLedgerSummary(w http.ResponseWriter, r *http.Request) {
	in.api("ledger_summary", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		q, ok := queryParams(w, r, "from", "to")
		if !ok {
			return
		}
		from, to, ok := dateParams(w, q)
		if !ok {
			return
		}
		reply, err := ask(r.Context(), in, bus.NotifierLedgerSummary(), p.TenantID, p.UserID, contracts.LedgerSummaryRequest{From: from, To: to})
		if err != nil {
			in.notifierFailed(w, err)
			return
		}
		sum := ledgerSummary{From: reply.From, To: reply.To, Count: reply.Count, Spending: reply.Spending, Income: reply.Income, ByCategory: reply.ByCategory}
		if sum.Spending == nil {
			sum.Spending = []contracts.Money{}
		}
		if sum.Income == nil {
			sum.Income = []contracts.Money{}
		}
		if sum.ByCategory == nil {
			sum.ByCategory = []contracts.CategorySpending{}
		}
		writeJSON(w, http.StatusOK, sum)
	})
}

// queryParams reads the request's query, answering 400 itself for a
// query that does not parse, a parameter not in allowed, or one given
// twice.
func queryParams(w http.ResponseWriter, r *http.Request, allowed ...string) (url.Values, bool) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad_request", "query: cannot be parsed")
		return nil, false
	}
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		switch {
		case !slices.Contains(allowed, name):
			writeJSONError(w, http.StatusBadRequest, "bad_request", strconv.Quote(name)+": unknown parameter")
			return nil, false
		case len(q[name]) > 1:
			writeJSONError(w, http.StatusBadRequest, "bad_request", name+": given more than once")
			return nil, false
		}
	}
	return q, true
}

// dateParams reads ?from= and ?to= (YYYY-MM-DD, each optional, from not
// after to), answering 400 itself when they are bad.
func dateParams(w http.ResponseWriter, q url.Values) (from, to string, ok bool) {
	from, to = q.Get("from"), q.Get("to")
	for _, d := range []struct{ name, value string }{{"from", from}, {"to", to}} {
		if d.value == "" {
			continue
		}
		if _, err := time.Parse(time.DateOnly, d.value); err != nil {
			writeJSONError(w, http.StatusBadRequest, "bad_request", d.name+": must be a date, YYYY-MM-DD")
			return "", "", false
		}
	}
	if from != "" && to != "" && to < from {
		writeJSONError(w, http.StatusBadRequest, "bad_request", "to: must not be before from")
		return "", "", false
	}
	return from, to, true
}
