package toolrunner

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ResolveRange turns the shared range grammar into inclusive dates
// (YYYY-MM-DD) in the user's time zone: today, yesterday, this_week,
// last_week (weeks start on Monday), this_month, last_month, last_N_days
// (today and the N-1 days before), YYYY-MM, YYYY-MM-DD..YYYY-MM-DD.
func ResolveRange(r string, now time.Time, loc *time.Location) (from, to string, err error) {
	now = now.In(loc)
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)
	day := func(t time.Time) string { return t.Format(time.DateOnly) }
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
	case "this_month", "last_month":
		first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, loc)
		if r == "last_month" {
			first = first.AddDate(0, -1, 0)
		}
		return day(first), day(first.AddDate(0, 1, -1)), nil
	}
	if n, ok := strings.CutPrefix(r, "last_"); ok {
		if num, ok := strings.CutSuffix(n, "_days"); ok {
			k, err := strconv.Atoi(num)
			if err != nil || k < 1 || k > 999 {
				return "", "", fmt.Errorf("range %q: N must be 1-999", r)
			}
			return day(today.AddDate(0, 0, -(k - 1))), day(today), nil
		}
	}
	if f, t, ok := strings.Cut(r, ".."); ok {
		ft, err1 := time.ParseInLocation(time.DateOnly, f, loc)
		tt, err2 := time.ParseInLocation(time.DateOnly, t, loc)
		if err1 != nil || err2 != nil || tt.Before(ft) {
			return "", "", fmt.Errorf("range %q: want YYYY-MM-DD..YYYY-MM-DD with real dates in order", r)
		}
		return f, t, nil
	}
	if m, err := time.ParseInLocation("2006-01", r, loc); err == nil && len(r) == 7 {
		return day(m), day(m.AddDate(0, 1, -1)), nil
	}
	return "", "", fmt.Errorf("range %q is not one of today, yesterday, this_week, last_week, this_month, last_month, last_N_days, YYYY-MM, YYYY-MM-DD..YYYY-MM-DD", r)
}
