package offline

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// searchFor sends a request to find the person's own records to the
// search tool (searchIntent reads it), with the words cleared of the
// dates and kinds around them ("Deliveroo payments last month" looks for
// "deliveroo" over last month's days). The number in it is a year, never
// an amount.
func searchFor(text string, now time.Time) (orchestrator.Decision, bool) {
	d, ok := searchIntent(text)
	if !ok {
		return d, false
	}
	var args contracts.SearchArgs
	if json.Unmarshal(d.Calls[0].Args, &args) != nil {
		return d, true
	}
	if words := searchWords(args.Query, now); words != "" {
		args.Query = words
	}
	if args.From == nil {
		if from, to, ok := rangeDays(rangeOf(text, now), now); ok && !strings.EqualFold(rangeOf(text, now), rangeOf("", now)) {
			args.From, args.To = &from, &to
		} else if y := searchYearRe.FindStringSubmatch(text); y != nil {
			from, to := y[1]+"-01-01", y[1]+"-12-31"
			args.From, args.To = &from, &to
		}
	}
	return call(contracts.ToolSearch, args), true
}

// rangeDays are the first and last day of a range rangeOf gives, for the
// ranges a search names; ok is false for others (then no dates bound it).
func rangeDays(r string, now time.Time) (from, to string, ok bool) {
	day := midnight(now)
	f := func(t time.Time) string { return t.Format(time.DateOnly) }
	switch {
	case r == "today":
		return f(day), f(day), true
	case r == "yesterday":
		return f(day.AddDate(0, 0, -1)), f(day.AddDate(0, 0, -1)), true
	case r == "this_month":
		first := time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, day.Location())
		return f(first), f(day), true
	case r == "last_month":
		first := time.Date(day.Year(), day.Month()-1, 1, 0, 0, 0, 0, day.Location())
		return f(first), f(first.AddDate(0, 1, -1)), true
	case r == "this_year":
		return fmt.Sprintf("%04d-01-01", day.Year()), f(day), true
	case r == "last_year":
		return fmt.Sprintf("%04d-01-01", day.Year()-1), fmt.Sprintf("%04d-12-31", day.Year()-1), true
	case strings.HasPrefix(r, "since_"):
		return strings.TrimPrefix(r, "since_"), f(day), true
	case strings.HasPrefix(r, "last_") && strings.HasSuffix(r, "_days"):
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r, "last_"), "_days"))
		if err != nil {
			return "", "", false
		}
		return f(day.AddDate(0, 0, 1-n)), f(day), true
	case len(r) == 4:
		return r + "-01-01", r + "-12-31", true
	case len(r) == 7 && r[4] == '-':
		first, err := time.Parse("2006-01", r)
		if err != nil {
			return "", "", false
		}
		return f(first), f(first.AddDate(0, 1, -1)), true
	}
	if a, b, found := strings.Cut(r, ".."); found {
		return a, b, true
	}
	return "", "", false
}
