package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kinds of ledger entry.
const (
	LedgerExpense     = "expense"     // typed by hand in chat (table expenses)
	LedgerTransaction = "transaction" // read from a statement (table transactions)
)

// ErrInvalidCursor is returned (wrapped) for a ledger cursor this store
// did not give.
var ErrInvalidCursor = errors.New("invalid cursor")

// LedgerEntry is one entry of a person's ledger: an expense typed by hand
// or a transaction read from a statement, read through the view
// ledger_entries (migration 10). AmountMinor is signed: money out is
// negative, so an expense (stored positive) reads negative. ID is the
// expense's per-user id or the transaction's id: Kind and ID together
// name an entry. Merchant, DocumentID and Account are empty for an
// expense, and Account for a line whose statement names none. LinkID is
// the entry of the other kind this one is linked to (an expense typed by
// hand and the bank line that settles it), 0 when none; TransferID is the
// other side of a transfer between the person's own accounts, 0 when none.
type LedgerEntry struct {
	Kind        string
	ID          int64
	TenantID    string
	UserID      string
	AmountMinor int64
	Currency    string
	Date        string // YYYY-MM-DD
	Description string
	Merchant    string
	Category    string
	Account     string
	DocumentID  string
	LinkID      int64
	TransferID  int64
}

// LedgerFilter selects one user's ledger entries. TenantID and UserID are
// required; other empty fields do not filter. From and To are inclusive
// dates; Query matches a case-insensitive substring of the description or
// merchant; Category matches exactly. Cursor is the Next of the page
// before, empty for the first page. Limit 0 means no limit.
type LedgerFilter struct {
	TenantID string
	UserID   string
	From, To string
	Query    string
	Category string
	Limit    int
	Cursor   string
}

// LedgerPage is one page of ledger entries, newest first. Next is the
// cursor of the following page, empty when this page is the last.
type LedgerPage struct {
	Entries []LedgerEntry
	Next    string
}

// LedgerAmount is an amount in minor units of one currency.
type LedgerAmount struct {
	Currency string
	Minor    int64
}

// CategorySpending is what one category spent, per currency.
type CategorySpending struct {
	Category string
	Spending []LedgerAmount
}

// LedgerSummary adds up a user's ledger over a date range. Count is the
// entries in the range. Spending is the money out and Income the money in,
// each positive and per currency, sorted by currency; ByCategory is the
// spending of each category (sorted by category, then currency). The
// database adds up; currencies are never added together.
//
// A transfer between two of the person's own accounts is neither spending
// nor income: it is left out of Count and the sums, and Transfers says how
// many lines were left out. An expense typed by hand that is linked to the
// bank line settling it is counted once, as that line.
type LedgerSummary struct {
	From, To   string
	Count      int
	Transfers  int
	Spending   []LedgerAmount
	Income     []LedgerAmount
	ByCategory []CategorySpending
}

const ledgerCols = `kind, id, user_id, amount_minor, currency, date, description, merchant, category, account, document_id, link_id, transfer_id`

// scanLedgerEntry reads one row of ledgerCols.
func scanLedgerEntry(rows rowScanner, tenantID string) (LedgerEntry, error) {
	e := LedgerEntry{TenantID: tenantID}
	err := rows.Scan(&e.Kind, &e.ID, &e.UserID, &e.AmountMinor, &e.Currency, &e.Date, &e.Description,
		&e.Merchant, &e.Category, &e.Account, &e.DocumentID, &e.LinkID, &e.TransferID)
	return e, err
}

// ListLedger returns a page of the user's ledger entries matching f,
// newest first (by date, then transactions before expenses, then id
// descending). Paging by cursor returns every entry once, even as entries
// are added between pages (an entry added before the cursor's position is
// not returned on a later page).
func (s *Store) ListLedger(ctx context.Context, f LedgerFilter) (LedgerPage, error) {
	if f.TenantID == "" || f.UserID == "" {
		return LedgerPage{}, errors.New("list ledger: a tenant and a user are required")
	}
	w := &where{}
	w.add("tenant_id = ?", f.TenantID)
	w.add("user_id = ?", f.UserID)
	if f.From != "" {
		w.add("date >= ?", f.From)
	}
	if f.To != "" {
		w.add("date <= ?", f.To)
	}
	if f.Query != "" {
		p := "%" + likeEscape(toLower(f.Query)) + "%"
		w.add(`(LOWER(description) LIKE ? ESCAPE '\' OR LOWER(merchant) LIKE ? ESCAPE '\')`, p, p)
	}
	if f.Category != "" {
		w.add("category = ?", f.Category)
	}
	if f.Cursor != "" {
		date, kind, id, err := parseLedgerCursor(f.Cursor)
		if err != nil {
			return LedgerPage{}, fmt.Errorf("list ledger: %w", err)
		}
		w.add("(date < ? OR (date = ? AND (kind < ? OR (kind = ? AND id < ?))))", date, date, kind, kind, id)
	}
	limit := 0
	if f.Limit > 0 {
		limit = f.Limit + 1 // one more tells whether a next page exists
	}
	out, err := s.ledgerRows(ctx, f.TenantID, `SELECT `+ledgerCols+` FROM ledger_entries`+w.sql()+` ORDER BY date DESC, kind DESC, id DESC`+limitClause(limit), w.args...)
	if err != nil {
		return LedgerPage{}, fmt.Errorf("list ledger: %w", err)
	}
	page := LedgerPage{Entries: out}
	if f.Limit > 0 && len(out) > f.Limit {
		page.Entries = out[:f.Limit]
		last := page.Entries[f.Limit-1]
		page.Next = ledgerCursor(last.Date, last.Kind, last.ID)
	}
	return page, nil
}

// ledgerCursor names the position after an entry: "date.kind.id".
func ledgerCursor(date, kind string, id int64) string {
	return date + "." + kind + "." + strconv.FormatInt(id, 10)
}

func parseLedgerCursor(c string) (date, kind string, id int64, err error) {
	parts := strings.Split(c, ".")
	if len(parts) != 3 || len(parts[0]) != len("2006-01-02") || (parts[1] != LedgerExpense && parts[1] != LedgerTransaction) {
		return "", "", 0, ErrInvalidCursor
	}
	id, err = strconv.ParseInt(parts[2], 10, 64)
	if err != nil {
		return "", "", 0, ErrInvalidCursor
	}
	return parts[0], parts[1], id, nil
}

// spentOnce selects the ledger entries that count as spending: money out,
// not one side of a transfer between the person's own accounts, and not
// an expense typed by hand that a bank line stands for (linked). Every sum
// of spending uses it, so no summary counts a pair twice.
const spentOnce = `amount_minor < 0 AND transfer_id = 0 AND (kind = 'transaction' OR link_id = 0)`

// ledgerSummarySQL adds up one user's entries in a date range in one
// statement (one snapshot): rows of part 0 are per currency (count, money
// out, money in, transfers left out), rows of part 1 per category and
// currency (money out). An expense linked to a bank line is left out (the
// line stands for both); a transfer is counted only as a transfer.
const ledgerSummarySQL = `SELECT 0 AS part, '' AS category, currency,
		CAST(COALESCE(SUM(CASE WHEN transfer_id = 0 THEN 1 ELSE 0 END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN transfer_id = 0 AND amount_minor < 0 THEN -amount_minor ELSE 0 END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN transfer_id = 0 AND amount_minor > 0 THEN amount_minor ELSE 0 END), 0) AS BIGINT),
		CAST(COALESCE(SUM(CASE WHEN transfer_id = 0 THEN 0 ELSE 1 END), 0) AS BIGINT)
	FROM ledger_entries WHERE tenant_id = ? AND user_id = ? AND date >= ? AND date <= ? AND (kind = 'transaction' OR link_id = 0)%[1]s
	GROUP BY currency
	UNION ALL
	SELECT 1 AS part, category, currency, COUNT(*), CAST(SUM(-amount_minor) AS BIGINT), 0, 0
	FROM ledger_entries WHERE tenant_id = ? AND user_id = ? AND date >= ? AND date <= ? AND ` + spentOnce + `%[1]s
	GROUP BY category, currency
	ORDER BY part, category, currency`

// ledgerMatchSQL narrows a summary to the entries a person's words name:
// part of the description or merchant, or the category itself.
const ledgerMatchSQL = ` AND (LOWER(description) LIKE ? ESCAPE '\' OR LOWER(merchant) LIKE ? ESCAPE '\' OR category = ?)`

// LedgerSummary adds up the user's ledger from from to to (inclusive
// dates, both required); see the type for what it counts.
func (s *Store) LedgerSummary(ctx context.Context, tenantID, userID, from, to string) (LedgerSummary, error) {
	return s.LedgerSummaryMatching(ctx, tenantID, userID, from, to, "")
}

// LedgerSummaryMatching is LedgerSummary over the entries that query
// names ("coffee", "Tesco", "groceries"): its words in the description or
// merchant, whatever their case, or the category itself. An empty query
// names every entry.
func (s *Store) LedgerSummaryMatching(ctx context.Context, tenantID, userID, from, to, query string) (LedgerSummary, error) {
	if tenantID == "" || userID == "" || from == "" || to == "" {
		return LedgerSummary{}, errors.New("ledger summary: a tenant, a user and both dates are required")
	}
	part := []any{tenantID, userID, from, to}
	match := ""
	if q := toLower(strings.TrimSpace(query)); q != "" {
		p := "%" + likeEscape(q) + "%"
		match, part = ledgerMatchSQL, append(part, p, p, q)
	}
	var sum LedgerSummary
	err := s.readRows(ctx, fmt.Sprintf(ledgerSummarySQL, match), append(slices.Clone(part), part...),
		func(rows rowScanner) error {
			sum = LedgerSummary{From: from, To: to, Spending: []LedgerAmount{}, Income: []LedgerAmount{}, ByCategory: []CategorySpending{}}
			for rows.Next() {
				var (
					part           int
					category, cur  string
					n, out, in, tr int64
				)
				if err := rows.Scan(&part, &category, &cur, &n, &out, &in, &tr); err != nil {
					return err
				}
				if part == 1 {
					if k := len(sum.ByCategory); k == 0 || sum.ByCategory[k-1].Category != category {
						sum.ByCategory = append(sum.ByCategory, CategorySpending{Category: category})
					}
					c := &sum.ByCategory[len(sum.ByCategory)-1]
					c.Spending = append(c.Spending, LedgerAmount{Currency: cur, Minor: out})
					continue
				}
				sum.Count += int(n)
				sum.Transfers += int(tr)
				if out > 0 {
					sum.Spending = append(sum.Spending, LedgerAmount{Currency: cur, Minor: out})
				}
				if in > 0 {
					sum.Income = append(sum.Income, LedgerAmount{Currency: cur, Minor: in})
				}
			}
			return nil
		})
	if err != nil {
		return LedgerSummary{}, fmt.Errorf("ledger summary: %w", err)
	}
	return sum, nil
}

// ledgerRows reads the ledger entries query q selects (ledgerCols, in
// order) of tenantID; never nil.
func (s *Store) ledgerRows(ctx context.Context, tenantID, q string, args ...any) ([]LedgerEntry, error) {
	out := []LedgerEntry{}
	err := s.readRows(ctx, q, args, func(rows rowScanner) error {
		out = out[:0]
		for rows.Next() {
			e, err := scanLedgerEntry(rows, tenantID)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	return out, err
}
