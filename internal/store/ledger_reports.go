package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// The summaries people ask for, read from the view ledger_entries by its
// columns alone: spending by category, by merchant and by month, the
// biggest outflows of a period, and the payments that recur. Spending is
// money out (a negative amount_minor), shown positive. The database adds
// up, per currency: amounts in different currencies are never added
// together, and every total counts every entry, also those beyond a limit.

// Groupings of SpendingBreakdown.
const (
	ByCategory = "category"
	ByMerchant = "merchant"
)

// merchantKey is the merchant an entry is grouped under: its merchant, or
// when it has none (an expense typed by hand), its description; trimmed
// and compared in lower case, so "TESCO" and "Tesco " are one merchant.
const merchantName = `TRIM(CASE WHEN merchant <> '' THEN merchant ELSE description END)`

// SpendingGroup is what one category or merchant spent in one currency:
// Minor is positive, Count the entries it adds up. Name is the category
// (empty for entries without one) or the merchant as last written.
type SpendingGroup struct {
	Name  string
	Minor int64
	Count int
}

// CurrencySpending is a breakdown of one currency's spending: Total and
// Count are every entry's, Groups is how many groups there are in all and
// Top the biggest of them, at most the limit asked (biggest first, then by
// name).
type CurrencySpending struct {
	Currency string
	Total    int64
	Count    int
	Groups   int
	Top      []SpendingGroup
}

// SpendingBreakdown is a user's spending from From to To grouped By
// category or merchant, one CurrencySpending per currency, sorted by
// currency.
type SpendingBreakdown struct {
	From, To   string
	By         string
	Currencies []CurrencySpending
}

// spendingBreakdownSQL groups one user's money out in a range by %s (the
// group's key) and ranks the groups of each currency, biggest first; the
// window sums give each currency's totals over every group.
const spendingBreakdownSQL = `WITH g AS (
		SELECT %[1]s AS k, MAX(%[2]s) AS name, currency, SUM(-amount_minor) AS minor, COUNT(*) AS n
		FROM ledger_entries WHERE tenant_id = ? AND user_id = ? AND date >= ? AND date <= ? AND ` + spentOnce + `
		GROUP BY %[1]s, currency
	), r AS (
		SELECT name, currency, minor, n,
			ROW_NUMBER() OVER (PARTITION BY currency ORDER BY minor DESC, k) AS rk,
			COUNT(*) OVER (PARTITION BY currency) AS ngroups,
			SUM(minor) OVER (PARTITION BY currency) AS total,
			SUM(n) OVER (PARTITION BY currency) AS entries
		FROM g
	)
	SELECT name, currency, CAST(minor AS BIGINT), CAST(n AS BIGINT), CAST(ngroups AS BIGINT), CAST(total AS BIGINT), CAST(entries AS BIGINT)
	FROM r WHERE rk <= ? ORDER BY currency, rk`

var (
	byCategorySQL = fmt.Sprintf(spendingBreakdownSQL, "category", "category")
	byMerchantSQL = fmt.Sprintf(spendingBreakdownSQL, "LOWER("+merchantName+")", merchantName)
)

// SpendingBreakdown adds up the user's spending from from to to
// (inclusive dates, both required) by category or merchant (ByCategory,
// ByMerchant), naming at most limit groups of each currency (limit >= 1).
func (s *Store) SpendingBreakdown(ctx context.Context, tenantID, userID, from, to, by string, limit int) (SpendingBreakdown, error) {
	if tenantID == "" || userID == "" || from == "" || to == "" || limit < 1 {
		return SpendingBreakdown{}, errors.New("spending breakdown: a tenant, a user, both dates and a limit are required")
	}
	q := byCategorySQL
	switch by {
	case ByCategory:
	case ByMerchant:
		q = byMerchantSQL
	default:
		return SpendingBreakdown{}, fmt.Errorf("spending breakdown: cannot group by %q", by)
	}
	var out SpendingBreakdown
	err := s.readRows(ctx, q, []any{tenantID, userID, from, to, limit}, func(rows rowScanner) error {
		out = SpendingBreakdown{From: from, To: to, By: by, Currencies: []CurrencySpending{}}
		for rows.Next() {
			var (
				g                      SpendingGroup
				cur                    string
				n, groups, total, ents int64
			)
			if err := rows.Scan(&g.Name, &cur, &g.Minor, &n, &groups, &total, &ents); err != nil {
				return err
			}
			g.Count = int(n)
			if k := len(out.Currencies); k == 0 || out.Currencies[k-1].Currency != cur {
				out.Currencies = append(out.Currencies, CurrencySpending{Currency: cur, Total: total, Count: int(ents), Groups: int(groups)})
			}
			c := &out.Currencies[len(out.Currencies)-1]
			c.Top = append(c.Top, g)
		}
		return nil
	})
	if err != nil {
		return SpendingBreakdown{}, fmt.Errorf("spending breakdown: %w", err)
	}
	return out, nil
}

// MaxSummaryMonths is the most months SpendingByMonth lists at once.
const MaxSummaryMonths = 60

// MonthSpending is one currency's spending in one month (YYYY-MM): Minor
// positive, Count the entries. Previous is the same currency's spending
// in the month before (whether or not in the range asked; 0 when none)
// and Change is Minor - Previous.
type MonthSpending struct {
	Month    string
	Minor    int64
	Count    int
	Previous int64
	Change   int64
}

// CurrencyMonths is one currency's months, oldest first: every month of
// the range, a month without spending included (as zero).
type CurrencyMonths struct {
	Currency string
	Months   []MonthSpending
}

// MonthlySpending is a user's spending month by month from From to To, one
// CurrencyMonths per currency spent in the range, sorted by currency.
type MonthlySpending struct {
	From, To   string
	Currencies []CurrencyMonths
}

// spendingByMonthSQL adds up one user's money out per month and currency:
// part 0 over the range, part 1 over the whole month before the range's
// first month, which the first month's change is measured against.
const spendingByMonthSQL = `SELECT 0 AS part, SUBSTR(date, 1, 7) AS mon, currency, CAST(SUM(-amount_minor) AS BIGINT), COUNT(*)
	FROM ledger_entries WHERE tenant_id = ? AND user_id = ? AND date >= ? AND date <= ? AND ` + spentOnce + `
	GROUP BY SUBSTR(date, 1, 7), currency
	UNION ALL
	SELECT 1 AS part, '' AS mon, currency, CAST(SUM(-amount_minor) AS BIGINT), COUNT(*)
	FROM ledger_entries WHERE tenant_id = ? AND user_id = ? AND date >= ? AND date <= ? AND ` + spentOnce + `
	GROUP BY currency
	ORDER BY part, currency, mon`

// SpendingByMonth adds up the user's spending month by month from from to
// to (inclusive dates YYYY-MM-DD, at most MaxSummaryMonths months), with
// each month's change from the month before. A range that starts or ends
// inside a month counts that month's part in the range only.
func (s *Store) SpendingByMonth(ctx context.Context, tenantID, userID, from, to string) (MonthlySpending, error) {
	if tenantID == "" || userID == "" {
		return MonthlySpending{}, errors.New("spending by month: a tenant and a user are required")
	}
	f, err1 := time.Parse(time.DateOnly, from)
	t, err2 := time.Parse(time.DateOnly, to)
	if err1 != nil || err2 != nil || t.Before(f) {
		return MonthlySpending{}, fmt.Errorf("spending by month: %q..%q is not a range of dates", from, to)
	}
	first := time.Date(f.Year(), f.Month(), 1, 0, 0, 0, 0, time.UTC)
	n := (t.Year()-f.Year())*12 + int(t.Month()) - int(f.Month()) + 1
	if n > MaxSummaryMonths {
		return MonthlySpending{}, fmt.Errorf("spending by month: %d months, at most %d", n, MaxSummaryMonths)
	}
	prevFrom, prevTo := first.AddDate(0, -1, 0).Format(time.DateOnly), first.AddDate(0, 0, -1).Format(time.DateOnly)
	months := make([]string, n)
	for i := range months {
		months[i] = first.AddDate(0, i, 0).Format("2006-01")
	}
	var out MonthlySpending
	err := s.readRows(ctx, spendingByMonthSQL, []any{tenantID, userID, from, to, tenantID, userID, prevFrom, prevTo},
		func(rows rowScanner) error {
			out = MonthlySpending{From: from, To: to, Currencies: []CurrencyMonths{}}
			prev := map[string]int64{}
			for rows.Next() {
				var (
					part          int
					month, cur    string
					minor, counts int64
				)
				if err := rows.Scan(&part, &month, &cur, &minor, &counts); err != nil {
					return err
				}
				if part == 1 {
					prev[cur] = minor
					continue
				}
				if k := len(out.Currencies); k == 0 || out.Currencies[k-1].Currency != cur {
					c := CurrencyMonths{Currency: cur, Months: make([]MonthSpending, n)}
					for i, m := range months {
						c.Months[i].Month = m
					}
					out.Currencies = append(out.Currencies, c)
				}
				c := &out.Currencies[len(out.Currencies)-1]
				if i := slices.Index(months, month); i >= 0 {
					c.Months[i].Minor, c.Months[i].Count = minor, int(counts)
				}
			}
			for i := range out.Currencies {
				c := &out.Currencies[i]
				p := prev[c.Currency]
				for j := range c.Months {
					c.Months[j].Previous, c.Months[j].Change = p, c.Months[j].Minor-p
					p = c.Months[j].Minor
				}
			}
			return nil
		})
	if err != nil {
		return MonthlySpending{}, fmt.Errorf("spending by month: %w", err)
	}
	return out, nil
}

// biggestOutflowsSQL ranks one user's money out in a range within each
// currency, biggest first (then newest, then by kind and id).
const biggestOutflowsSQL = `SELECT ` + ledgerCols + ` FROM (
		SELECT ` + ledgerCols + `,
			ROW_NUMBER() OVER (PARTITION BY currency ORDER BY amount_minor, date DESC, kind, id) AS rk
		FROM ledger_entries WHERE tenant_id = ? AND user_id = ? AND date >= ? AND date <= ? AND ` + spentOnce + `
	) r WHERE rk <= ? ORDER BY currency, rk`

// BiggestOutflows returns the user's biggest entries of money out from
// from to to (inclusive dates, both required): at most limit (>= 1) of
// each currency, sorted by currency, then biggest first. Amounts of
// different currencies are never compared with each other. AmountMinor
// is negative, as in the ledger.
func (s *Store) BiggestOutflows(ctx context.Context, tenantID, userID, from, to string, limit int) ([]LedgerEntry, error) {
	if tenantID == "" || userID == "" || from == "" || to == "" || limit < 1 {
		return nil, errors.New("biggest outflows: a tenant, a user, both dates and a limit are required")
	}
	out, err := s.ledgerRows(ctx, tenantID, biggestOutflowsSQL, tenantID, userID, from, to, limit)
	if err != nil {
		return nil, fmt.Errorf("biggest outflows: %w", err)
	}
	return out, nil
}

// Rhythms of a recurring payment.
const (
	RhythmMonthly = "monthly" // 25 to 35 days apart
	RhythmWeekly  = "weekly"  // 6 to 8 days apart
)

// RecurringPayment is a payment that recurs: the same merchant, in the
// same currency, for a similar amount (within 10% of the typical one), at
// least three times at a monthly or weekly rhythm. Typical is the median
// of those payments' amounts (positive minor units), Count how many there
// were, Last the latest's date and Next the date the one after is
// expected.
type RecurringPayment struct {
	Merchant string
	Currency string
	Typical  int64
	Rhythm   string
	Count    int
	Last     string
	Next     string
}

// MaxRecurringRows bounds how many entries RecurringPayments reads to
// judge rhythms: a ledger with more money out than this in the range
// (among merchants paid at least three times) is judged on the merchants
// that come first by name.
const MaxRecurringRows = 20_000

// recurringSQL reads one user's money out in a range for every merchant
// (as SpendingBreakdown names them) paid at least three times in one
// currency, grouped by merchant and currency, oldest first. The count of
// each group is a window over one pass of the range (a join of the range
// with its groups costs SQLite a nested loop).
const recurringSQL = `SELECT k, name, currency, date, minor FROM (
		SELECT LOWER(` + merchantName + `) AS k, ` + merchantName + ` AS name, currency, date, CAST(-amount_minor AS BIGINT) AS minor,
			COUNT(*) OVER (PARTITION BY LOWER(` + merchantName + `), currency) AS n
		FROM ledger_entries WHERE tenant_id = ? AND user_id = ? AND date >= ? AND date <= ? AND ` + spentOnce + `
	) o WHERE n >= 3
	ORDER BY k, currency, date`

// RecurringPayments finds the user's payments that recur between from and
// to (inclusive dates, both required), as of to: a series whose next
// payment was due more than a third of its rhythm before to has stopped
// and is not listed. They are sorted by currency, then biggest typical
// amount first, then merchant. The database groups; the rhythm of each
// group's dates is judged here.
func (s *Store) RecurringPayments(ctx context.Context, tenantID, userID, from, to string) ([]RecurringPayment, error) {
	if tenantID == "" || userID == "" || from == "" || to == "" {
		return nil, errors.New("recurring payments: a tenant, a user and both dates are required")
	}
	asOf, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return nil, fmt.Errorf("recurring payments: %q is not a date", to)
	}
	var out []RecurringPayment
	err = s.readRows(ctx, recurringSQL+limitLiteral(MaxRecurringRows), []any{tenantID, userID, from, to}, func(rows rowScanner) error {
		out = []RecurringPayment{}
		var (
			key, cur string
			series   []payment
		)
		flush := func() {
			if p, ok := recurring(series, asOf); ok {
				p.Currency = cur
				out = append(out, p)
			}
			series = series[:0]
		}
		for rows.Next() {
			var (
				k, c string
				p    payment
			)
			if err := rows.Scan(&k, &p.name, &c, &p.date, &p.minor); err != nil {
				return err
			}
			if k != key || c != cur {
				flush()
				key, cur = k, c
			}
			series = append(series, p)
		}
		flush()
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("recurring payments: %w", err)
	}
	slices.SortFunc(out, func(a, b RecurringPayment) int {
		if a.Currency != b.Currency {
			return cmp.Compare(a.Currency, b.Currency)
		}
		if a.Typical != b.Typical {
			return cmp.Compare(b.Typical, a.Typical)
		}
		return cmp.Compare(a.Merchant, b.Merchant)
	})
	return out, nil
}

// payment is one payment of a series: a merchant's, in one currency.
type payment struct {
	name  string
	date  string
	minor int64
}

// recurring judges one merchant's payments in one currency, oldest first:
// those within 10% of their most common amount (so a shop's one-off
// purchases do not hide a subscription paid there), one a day, recur when at least
// two of the gaps between them (three payments) and three in four of all
// their gaps are of one rhythm.
func recurring(series []payment, asOf time.Time) (RecurringPayment, bool) {
	if len(series) < 3 {
		return RecurringPayment{}, false
	}
	typical := commonAmount(series)
	tol := max(typical/10, 1)
	var kept []payment
	for _, p := range series {
		if p.minor < typical-tol || p.minor > typical+tol {
			continue
		}
		if n := len(kept); n > 0 && kept[n-1].date == p.date {
			continue // two lines of one day are one payment
		}
		kept = append(kept, p)
	}
	if len(kept) < 3 {
		return RecurringPayment{}, false
	}
	var monthly, weekly int
	days := make([]time.Time, len(kept))
	for i, p := range kept {
		d, err := time.Parse(time.DateOnly, p.date)
		if err != nil {
			return RecurringPayment{}, false
		}
		days[i] = d
		if i == 0 {
			continue
		}
		switch gap := int(d.Sub(days[i-1]).Hours() / 24); {
		case gap >= 25 && gap <= 35:
			monthly++
		case gap >= 6 && gap <= 8:
			weekly++
		}
	}
	gaps := len(kept) - 1
	last := days[len(days)-1]
	p := RecurringPayment{Merchant: kept[len(kept)-1].name, Typical: median(kept), Count: len(kept), Last: last.Format(time.DateOnly)}
	var next time.Time
	var grace int
	switch {
	case monthly >= 2 && 4*monthly >= 3*gaps:
		p.Rhythm, next, grace = RhythmMonthly, addMonth(last), 10
	case weekly >= 2 && 4*weekly >= 3*gaps:
		p.Rhythm, next, grace = RhythmWeekly, last.AddDate(0, 0, 7), 2
	default:
		return RecurringPayment{}, false
	}
	if next.AddDate(0, 0, grace).Before(asOf) {
		return RecurringPayment{}, false // stopped
	}
	p.Next = next.Format(time.DateOnly)
	return p, true
}

// addMonth is the same day of the next month, or its last day when the
// next month is shorter (31 January -> 28 February).
func addMonth(t time.Time) time.Time {
	first := time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	lastDay := first.AddDate(0, 1, -1).Day()
	return time.Date(first.Year(), first.Month(), min(t.Day(), lastDay), 0, 0, 0, 0, time.UTC)
}

// median is the middle amount of ps (the lower middle of an even count).
func median(ps []payment) int64 {
	a := make([]int64, len(ps))
	for i, p := range ps {
		a[i] = p.minor
	}
	slices.Sort(a)
	return a[(len(a)-1)/2]
}

// commonAmount is the amount of ps that the most of ps lie within 10% of
// (the smaller of a tie).
func commonAmount(ps []payment) int64 {
	a := make([]int64, len(ps))
	for i, p := range ps {
		a[i] = p.minor
	}
	slices.Sort(a)
	best, most := a[0], 0
	for _, x := range a {
		tol := max(x/10, 1)
		lo, _ := slices.BinarySearch(a, x-tol)
		hi, _ := slices.BinarySearch(a, x+tol+1)
		if hi-lo > most {
			best, most = x, hi-lo
		}
	}
	return best
}
