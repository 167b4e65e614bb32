package contracts

import (
	"regexp"
	"strings"
	"time"
)

// RangeGrammar lists the forms of the date range grammar shared by every
// tool, as the model and the README are told.
const RangeGrammar = "today, yesterday, this_week, last_week, this_month, last_month, this_quarter, last_quarter, this_year, last_year, " +
	"last_N_days (N 1-999), YYYY (a year), YYYY-QN (a quarter, e.g. 2026-Q1), YYYY-MM (a month), " +
	"since_YYYY-MM-DD (that day to today), YYYY-MM-DD..YYYY-MM-DD, all_time"

// rangePattern is the shape of the date range grammar.
var rangePattern = regexp.MustCompile(`^(today|yesterday|this_week|last_week|this_month|last_month|this_quarter|last_quarter|this_year|last_year|all_time|` +
	`last_[1-9][0-9]{0,2}_days|[0-9]{4}|[0-9]{4}-Q[1-4]|[0-9]{4}-(0[1-9]|1[0-2])|since_[0-9]{4}-[0-9]{2}-[0-9]{2}|` +
	`[0-9]{4}-[0-9]{2}-[0-9]{2}\.\.[0-9]{4}-[0-9]{2}-[0-9]{2})$`)

// ValidRange reports whether s follows the shared date range grammar
// (RangeGrammar), with real dates in order. Whether a range lies in the
// future is not its concern.
func ValidRange(s string) bool {
	if !rangePattern.MatchString(s) {
		return false
	}
	if from, to, ok := strings.Cut(s, ".."); ok {
		f, err1 := time.Parse(time.DateOnly, from)
		t, err2 := time.Parse(time.DateOnly, to)
		return err1 == nil && err2 == nil && !t.Before(f)
	}
	if day, ok := strings.CutPrefix(s, "since_"); ok {
		_, err := time.Parse(time.DateOnly, day)
		return err == nil
	}
	return true
}
