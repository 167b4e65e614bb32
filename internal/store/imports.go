package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Windows of matching at import, in days either side of a line's date.
const (
	linkWindowDays     = 3 // an expense typed by hand and the bank line that settles it
	transferWindowDays = 5 // the two sides of a transfer between own accounts
)

// ImportOutcome is what importing one statement's lines did (from
// ImportTransactions) or would do (from PlanImport).
type ImportOutcome struct {
	// New is how many lines are (or would be) stored, Already how many the
	// ledger already held: the same line from an earlier statement, of this
	// format or another.
	New, Already int
	// Linked are new lines that settle an expense typed by hand: the pair
	// counts once in the ledger.
	Linked []ImportMatch
	// Doubtful are new lines whose amount, currency and date match an
	// expense typed by hand but whose words do not: they are not linked,
	// and the person is asked.
	Doubtful []ImportMatch
	// Transfers is how many new lines were paired with a line of another
	// of the person's accounts as a transfer (ImportTransactions only).
	Transfers int
}

// ImportMatch pairs a line (its index in the lines given) with an
// expense typed by hand.
type ImportMatch struct {
	Line    int
	Expense Expense
}

// importPlan is which of a statement's lines are new and which expense
// each new one settles.
type importPlan struct {
	isNew   []bool
	link    []int64 // expense id per line, 0 for none
	outcome ImportOutcome
}

// PlanImport says what ImportTransactions would do with lines now,
// changing nothing. Every line must be of one tenant and user.
func (s *Store) PlanImport(ctx context.Context, lines []Transaction) (ImportOutcome, error) {
	p, err := s.planImport(ctx, lines)
	if err != nil {
		return ImportOutcome{}, fmt.Errorf("plan import: %w", err)
	}
	return p.outcome, nil
}

// ImportTransactions stores the lines of one statement that the ledger
// does not hold yet, in one database transaction, and returns what it
// did. A line is already held when a stored line has its key (the bank's
// id, or its fingerprint and occurrence in its file), or, across
// statements of different formats whose descriptions differ, by counting:
// of the lines with one date, amount and currency (and account, when both
// know it), a statement adds only as many as it holds beyond those stored
// and not already matched by key. So two identical lines of one file stay
// two, and the same month read again from another format adds nothing.
// A new line that settles an expense typed by hand (same amount and
// currency, dates at most 3 days apart, compatible words) is linked to it;
// a new line that is the other side of a line of another of the person's
// accounts (opposite amount, same currency, dates at most 5 days apart) is
// paired with it as a transfer. Imports of one user are serialised, so two
// at once cannot both add the same line.
func (s *Store) ImportTransactions(ctx context.Context, lines []Transaction) (ImportOutcome, error) {
	var out ImportOutcome
	err := s.InTx(ctx, func(tx *Store) error {
		if len(lines) == 0 {
			out = ImportOutcome{}
			return nil
		}
		// One import of a user at a time: the counter's row is locked
		// until the transaction ends (on SQLite the write lock is).
		if _, err := tx.counter(ctx, lines[0].TenantID, lines[0].UserID, "import"); err != nil {
			return err
		}
		p, err := tx.planImport(ctx, lines)
		if err != nil {
			return err
		}
		out = p.outcome
		out.New, out.Already, out.Linked = 0, len(lines), nil
		ids := make([]int64, len(lines))
		for j, t := range lines {
			if !p.isNew[j] {
				continue
			}
			var id int64
			err := tx.queryRow(ctx, `INSERT INTO transactions (tenant_id, user_id, document_id, date, amount_minor, currency,
				description, vendor, category, fitid, dedupe_key, review_status, account, created_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, user_id, dedupe_key) DO NOTHING RETURNING id`,
				t.TenantID, t.UserID, t.DocumentID, t.Date, t.AmountMinor, t.Currency, t.Description, t.Vendor,
				t.Category, t.FITID, t.DedupeKey, t.ReviewStatus, t.Account, tx.d.ts(tx.orNow(t.CreatedAt))).Scan(&id)
			if errors.Is(err, sql.ErrNoRows) {
				continue // held after all: its key is stored
			} else if err != nil {
				return contentError(err)
			}
			ids[j] = id
			out.New++
			out.Already--
			if e := p.link[j]; e != 0 {
				// A link left by a bank line since removed no longer holds.
				if _, err := tx.exec(ctx, `DELETE FROM ledger_links WHERE tenant_id = ? AND user_id = ? AND expense_id = ?`,
					t.TenantID, t.UserID, e); err != nil {
					return err
				}
				if _, err := tx.exec(ctx, `INSERT INTO ledger_links (tenant_id, user_id, expense_id, transaction_id, created_at)
					VALUES (?, ?, ?, ?, ?)`, t.TenantID, t.UserID, e, id, tx.d.ts(tx.orNow(t.CreatedAt))); err != nil {
					return err
				}
				for _, m := range p.outcome.Linked {
					if m.Line == j {
						out.Linked = append(out.Linked, m)
					}
				}
			}
		}
		for j, t := range lines {
			if ids[j] == 0 || t.Account == "" {
				continue
			}
			paired, err := tx.pairTransfer(ctx, t, ids[j])
			if err != nil {
				return err
			}
			if paired {
				out.Transfers++
			}
		}
		return nil
	})
	if err != nil {
		return ImportOutcome{}, fmt.Errorf("import transactions: %w", err)
	}
	return out, nil
}

// pairTransfer pairs the stored line id (t) with the nearest unpaired line
// of another account of the user that has the opposite amount in the same
// currency within the transfer window, if any.
func (s *Store) pairTransfer(ctx context.Context, t Transaction, id int64) (bool, error) {
	var other int64
	var otherDate string
	best := -1
	rows, err := s.query(ctx, `SELECT id, date FROM transactions WHERE tenant_id = ? AND user_id = ? AND amount_minor = ?
		AND currency = ? AND date >= ? AND date <= ? AND account <> '' AND account <> ? AND id <> ?
		AND (transfer_id IS NULL OR NOT EXISTS (SELECT 1 FROM transactions p WHERE p.id = transactions.transfer_id))
		ORDER BY id`, t.TenantID, t.UserID, -t.AmountMinor, t.Currency, addDays(t.Date, -transferWindowDays),
		addDays(t.Date, transferWindowDays), t.Account, id)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var cid int64
		if err := rows.Scan(&cid, &otherDate); err != nil {
			rows.Close()
			return false, err
		}
		if d := daysApart(t.Date, otherDate); best < 0 || d < best {
			best, other = d, cid
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil || other == 0 {
		return false, err
	}
	for _, p := range [][2]int64{{id, other}, {other, id}} {
		if _, err := s.exec(ctx, `UPDATE transactions SET transfer_id = ? WHERE tenant_id = ? AND user_id = ? AND id = ?`,
			p[1], t.TenantID, t.UserID, p[0]); err != nil {
			return false, err
		}
	}
	return true, nil
}

// occurrence groups lines of one date, amount and currency.
type occurrence struct {
	date     string
	amount   int64
	currency string
}

func (s *Store) planImport(ctx context.Context, lines []Transaction) (importPlan, error) {
	p := importPlan{isNew: make([]bool, len(lines)), link: make([]int64, len(lines))}
	if len(lines) == 0 {
		return p, nil
	}
	tenant, user := lines[0].TenantID, lines[0].UserID
	from, to := lines[0].Date, lines[0].Date
	keys := make([]any, 0, len(lines))
	for _, l := range lines {
		if l.TenantID != tenant || l.UserID != user {
			return p, errors.New("the lines of one import belong to one user")
		}
		from, to = min(from, l.Date), max(to, l.Date)
		keys = append(keys, l.DedupeKey)
	}
	held := map[string]bool{}
	for chunk := range slices.Chunk(keys, 200) {
		q := `SELECT dedupe_key FROM transactions WHERE tenant_id = ? AND user_id = ? AND dedupe_key IN (?` +
			strings.Repeat(", ?", len(chunk)-1) + `)`
		err := s.readRows(ctx, q, append([]any{tenant, user}, chunk...), func(rows rowScanner) error {
			for rows.Next() {
				var k string
				if err := rows.Scan(&k); err != nil {
					return err
				}
				held[k] = true
			}
			return nil
		})
		if err != nil {
			return p, err
		}
	}
	// How many lines the ledger holds of each date, amount and currency,
	// per account: counted by the database.
	stored := map[occurrence]map[string]int{}
	err := s.readRows(ctx, `SELECT account, date, amount_minor, currency, COUNT(*) FROM transactions
		WHERE tenant_id = ? AND user_id = ? AND date >= ? AND date <= ? GROUP BY account, date, amount_minor, currency`,
		[]any{tenant, user, from, to}, func(rows rowScanner) error {
			for rows.Next() {
				var (
					acct string
					o    occurrence
					n    int
				)
				if err := rows.Scan(&acct, &o.date, &o.amount, &o.currency, &n); err != nil {
					return err
				}
				if stored[o] == nil {
					stored[o] = map[string]int{}
				}
				stored[o][acct] = n
			}
			return nil
		})
	if err != nil {
		return p, err
	}
	type group struct {
		occurrence
		account string
	}
	var order []group
	members := map[group][]int{}
	for j, l := range lines {
		g := group{occurrence{l.Date, l.AmountMinor, l.Currency}, l.Account}
		if members[g] == nil {
			order = append(order, g)
		}
		members[g] = append(members[g], j)
	}
	for _, g := range order {
		matched := 0
		for _, j := range members[g] {
			if held[lines[j].DedupeKey] {
				matched++
			}
		}
		// Stored lines this group may be: of its account or of none, or
		// of any account when the file names none.
		inStore := 0
		for acct, n := range stored[g.occurrence] {
			if g.account == "" || acct == "" || acct == g.account {
				inStore += n
			}
		}
		free := max(0, inStore-matched)
		for _, j := range members[g] {
			switch {
			case held[lines[j].DedupeKey]:
				p.outcome.Already++
			case free > 0:
				free--
				p.outcome.Already++
			default:
				p.isNew[j] = true
				p.outcome.New++
			}
		}
	}
	return p, s.planLinks(ctx, lines, &p, from, to)
}

// planLinks finds, for each new line of money out, the expense typed by
// hand it settles: same amount and currency, dates within the link
// window, compatible words, nearest date first; an expense settles one
// line. A match of amount and date whose words differ is doubtful.
func (s *Store) planLinks(ctx context.Context, lines []Transaction, p *importPlan, from, to string) error {
	if p.outcome.New == 0 {
		return nil
	}
	tenant, user := lines[0].TenantID, lines[0].UserID
	var expenses []Expense
	err := s.readRows(ctx, `SELECT e.id, e.item, e.amount_minor, e.currency, e.date, e.category FROM expenses e
		WHERE e.tenant_id = ? AND e.user_id = ? AND e.date >= ? AND e.date <= ? AND NOT EXISTS (SELECT 1 FROM ledger_links l
			JOIN transactions o ON o.id = l.transaction_id AND o.tenant_id = l.tenant_id AND o.user_id = l.user_id
			WHERE l.tenant_id = e.tenant_id AND l.user_id = e.user_id AND l.expense_id = e.id)
		ORDER BY e.date, e.id`, []any{tenant, user, addDays(from, -linkWindowDays), addDays(to, linkWindowDays)},
		func(rows rowScanner) error {
			expenses = expenses[:0]
			for rows.Next() {
				e := Expense{TenantID: tenant, UserID: user}
				if err := rows.Scan(&e.ID, &e.Item, &e.AmountMinor, &e.Currency, &e.Date, &e.Category); err != nil {
					return err
				}
				expenses = append(expenses, e)
			}
			return nil
		})
	if err != nil || len(expenses) == 0 {
		return err
	}
	used := map[int64]bool{}
	for j, l := range lines {
		if !p.isNew[j] || l.AmountMinor >= 0 {
			continue
		}
		var link, doubt *Expense
		for k := range expenses {
			e := &expenses[k]
			if used[e.ID] || e.AmountMinor != -l.AmountMinor || e.Currency != l.Currency || daysApart(e.Date, l.Date) > linkWindowDays {
				continue
			}
			near := func(best *Expense) bool {
				return best == nil || daysApart(e.Date, l.Date) < daysApart(best.Date, l.Date)
			}
			if CompatibleDescriptions(e.Item, cmp.Or(l.Vendor+" "+l.Description, l.Description)) {
				if near(link) {
					link = e
				}
			} else if near(doubt) {
				doubt = e
			}
		}
		switch {
		case link != nil:
			used[link.ID] = true
			p.link[j] = link.ID
			p.outcome.Linked = append(p.outcome.Linked, ImportMatch{Line: j, Expense: *link})
		case doubt != nil:
			p.outcome.Doubtful = append(p.outcome.Doubtful, ImportMatch{Line: j, Expense: *doubt})
		}
	}
	return nil
}

const day = "2006-01-02"

// addDays moves a YYYY-MM-DD date by n days; a date it cannot read is
// returned unchanged.
func addDays(date string, n int) string {
	t, err := time.Parse(day, date)
	if err != nil {
		return date
	}
	return t.AddDate(0, 0, n).Format(day)
}

// daysApart is how many days separate two YYYY-MM-DD dates; dates it
// cannot read are far apart.
func daysApart(a, b string) int {
	ta, err1 := time.Parse(day, a)
	tb, err2 := time.Parse(day, b)
	if err1 != nil || err2 != nil {
		return 1 << 30
	}
	d := int(ta.Sub(tb).Hours() / 24)
	if d < 0 {
		d = -d
	}
	return d
}
