package notifier

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Ledger page sizes: what an empty limit takes and the most one page holds.
const (
	defaultLedgerLimit = 50
	maxLedgerLimit     = 200
)

// ledger returns one page of the user's ledger, newest first; see
// contracts.LedgerRequest for the defaults.
func (n *Notifier) ledger(ctx context.Context, tenant, user string, req contracts.LedgerRequest) (contracts.LedgerReply, error) {
	from, to, err := n.ledgerRange(ctx, tenant, user, req.From, req.To)
	if err != nil {
		return contracts.LedgerReply{}, err
	}
	limit := req.Limit
	if limit <= 0 {
		limit = defaultLedgerLimit
	}
	page, err := n.store.ListLedger(ctx, store.LedgerFilter{TenantID: tenant, UserID: user, From: from, To: to,
		Query: req.Query, Category: req.Category, Limit: min(limit, maxLedgerLimit), Cursor: req.Cursor})
	switch {
	case errors.Is(err, store.ErrInvalidCursor):
		return contracts.LedgerReply{}, badRequest("cursor: not one this server gave")
	case err != nil:
		return contracts.LedgerReply{}, fmt.Errorf("list ledger: %w", err)
	}
	out := contracts.LedgerReply{Entries: make([]contracts.LedgerEntry, 0, len(page.Entries)), NextCursor: page.Next}
	for _, e := range page.Entries {
		out.Entries = append(out.Entries, contracts.LedgerEntry{
			ID: e.Kind + "-" + strconv.FormatInt(e.ID, 10), Kind: e.Kind, Date: e.Date,
			Amount:      contracts.Money{Minor: e.AmountMinor, Currency: e.Currency},
			Description: contracts.PlainText(e.Description), Category: contracts.PlainText(e.Category),
			Account: contracts.PlainText(e.Account), Source: e.DocumentID, Links: ledgerLinks(e),
		})
	}
	return out, nil
}

// ledgerSummary adds up the user's ledger over the range asked.
func (n *Notifier) ledgerSummary(ctx context.Context, tenant, user string, req contracts.LedgerSummaryRequest) (contracts.LedgerSummaryReply, error) {
	from, to, err := n.ledgerRange(ctx, tenant, user, req.From, req.To)
	if err != nil {
		return contracts.LedgerSummaryReply{}, err
	}
	sum, err := n.store.LedgerSummary(ctx, tenant, user, from, to)
	if err != nil {
		return contracts.LedgerSummaryReply{}, fmt.Errorf("ledger summary: %w", err)
	}
	money := func(in []store.LedgerAmount) []contracts.Money {
		out := make([]contracts.Money, 0, len(in))
		for _, a := range in {
			out = append(out, contracts.Money{Minor: a.Minor, Currency: a.Currency})
		}
		return out
	}
	out := contracts.LedgerSummaryReply{From: sum.From, To: sum.To, Count: sum.Count, Transfers: sum.Transfers, Spending: money(sum.Spending), Income: money(sum.Income),
		ByCategory: make([]contracts.CategorySpending, 0, len(sum.ByCategory))}
	for _, c := range sum.ByCategory {
		out.ByCategory = append(out.ByCategory, contracts.CategorySpending{Category: contracts.PlainText(c.Category), Spending: money(c.Spending)})
	}
	return out, nil
}

// ledgerRange fills in the dates left empty with the ends of the current
// month in the user's time zone (their setting, else UTC), and refuses a
// range that ends before it starts.
func (n *Notifier) ledgerRange(ctx context.Context, tenant, user, from, to string) (string, string, error) {
	asked := to != ""
	if from == "" || to == "" {
		set, err := n.store.GetUserSettings(ctx, tenant, user)
		if err != nil {
			return "", "", fmt.Errorf("user settings: %w", err)
		}
		first, last := monthOf(n.now(), set.Timezone)
		if from == "" {
			from = first
		}
		if to == "" {
			to = last
		}
	}
	switch {
	case to < from && !asked:
		return "", "", badRequest("from: after the end of this month; give to as well")
	case to < from:
		return "", "", badRequest("to: must not be before from")
	}
	return from, to, nil
}

// monthOf is the first and last day of the month that now falls in, in
// zone (UTC when empty or unknown).
func monthOf(now time.Time, zone string) (first, last string) {
	loc := time.UTC
	if l, err := contracts.LoadZone(zone); err == nil && zone != "" {
		loc = l
	}
	y, m, _ := now.In(loc).Date()
	start := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	return start.Format(time.DateOnly), start.AddDate(0, 1, -1).Format(time.DateOnly)
}

// ledgerLinks names the entries e is paired with: the other of a linked
// expense and bank line, the other side of a transfer.
func ledgerLinks(e store.LedgerEntry) []contracts.LedgerLink {
	links := []contracts.LedgerLink{}
	if e.LinkID != 0 {
		other := store.LedgerExpense
		if e.Kind == store.LedgerExpense {
			other = store.LedgerTransaction
		}
		links = append(links, contracts.LedgerLink{ID: other + "-" + strconv.FormatInt(e.LinkID, 10), Kind: contracts.LedgerLinkLinked})
	}
	if e.TransferID != 0 {
		links = append(links, contracts.LedgerLink{ID: store.LedgerTransaction + "-" + strconv.FormatInt(e.TransferID, 10), Kind: contracts.LedgerLinkTransfer})
	}
	return links
}
