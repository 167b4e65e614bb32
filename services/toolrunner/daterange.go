package toolrunner

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Bounds of all_time: every date a store can hold.
const (
	allTimeFrom = "0001-01-01"
	allTimeTo   = "9999-12-31"
)

// ResolveRange turns the shared range grammar (contracts.RangeGrammar) into
// inclusive dates (YYYY-MM-DD) in the user's time zone:
//
//	today, yesterday
//	this_week, last_week          weeks start on Monday
//	this_month, last_month
//	this_quarter, last_quarter    Jan-Mar, Apr-Jun, Jul-Sep, Oct-Dec
//	this_year, last_year          the calendar year, to 31 December
//	last_N_days                   today and the N-1 days before, N 1-999
//	YYYY                          a calendar year
//	YYYY-QN                       a quarter of that year, N 1-4
//	YYYY-MM                       a month
//	since_YYYY-MM-DD              that day to today (a day after today is refused)
//	YYYY-MM-DD..YYYY-MM-DD        both days included
//	all_time                      0001-01-01..9999-12-31
//
// "this" periods run to their end, so an expense dated later in the period
// is counted.
func ResolveRange(r string, now time.Time, loc *time.Location) (from, to string, err error) {
	if !contracts.ValidRange(r) {
		return "", "", fmt.Errorf("range %q is not one of %s", r, contracts.RangeGrammar)
	}
	now = now.In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
	span := func(first time.Time, months int) (string, string, error) {
		return day(first), day(first.AddDate(0, months, -1)), nil
	}
	quarter := func(year int, q int) time.Time { return time.Date(year, time.Month(3*(q-1)+1), 1, 0, 0, 0, 0, loc) }
	thisQuarter := quarter(today.Year(), (int(today.Month())-1)/3+1)
	switch r {
	case "today":
		return day(today), day(today), nil
	case "yesterday":
		y := today.AddDate(0, 0, -1)
		return day(y), day(y), nil
	case "this_week", "last_week":
		monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
		if r == "last_week" {
			monday = monday.AddDate(0, 0, -7)
		}
		return day(monday), day(monday.AddDate(0, 0, 6)), nil
	case "this_month":
		return span(time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, loc), 1)
	case "last_month":
		return span(time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, loc).AddDate(0, -1, 0), 1)
	case "this_quarter":
		return span(thisQuarter, 3)
	case "last_quarter":
		return span(thisQuarter.AddDate(0, -3, 0), 3)
	case "this_year":
		return span(time.Date(today.Year(), 1, 1, 0, 0, 0, 0, loc), 12)
	case "last_year":
		return span(time.Date(today.Year()-1, 1, 1, 0, 0, 0, 0, loc), 12)
	case "all_time":
		return allTimeFrom, allTimeTo, nil
	}
	if n, ok := strings.CutPrefix(r, "last_"); ok {
		num := strings.TrimSuffix(n, "_days")
		k, _ := strconv.Atoi(num) // 1-999 by the grammar
		return day(today.AddDate(0, 0, -(k - 1))), day(today), nil
	}
	if d, ok := strings.CutPrefix(r, "since_"); ok {
		if d > day(today) {
			return "", "", fmt.Errorf("range %q starts after today", r)
		}
		return d, day(today), nil
	}
	if f, t, ok := strings.Cut(r, ".."); ok {
		return f, t, nil // checked by ValidRange
	}
	if y, q, ok := strings.Cut(r, "-Q"); ok {
		year, _ := strconv.Atoi(y)
		n, _ := strconv.Atoi(q)
		return span(quarter(year, n), 3)
	}
	if len(r) == 4 {
		year, _ := strconv.Atoi(r)
		return span(time.Date(year, 1, 1, 0, 0, 0, 0, loc), 12)
	}
	m, err := time.ParseInLocation("2006-01", r, loc)
	if err != nil {
		return "", "", fmt.Errorf("range %q: %w", r, err)
	}
	return span(m, 1)
}
