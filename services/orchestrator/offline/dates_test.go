package offline

import (
	"testing"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

func TestFindDate(t *testing.T) {
	tests := []struct {
		give string
		want string
	}{
		{"lunch today", "2026-11-22"},
		{"lunch yesterday", "2026-11-21"},
		{"taxi last Friday", "2026-11-20"},
		{"taxi on friday", "2026-11-20"},
		{"gym last sunday", "2026-11-15"},
		{"books on 3 Nov", "2026-11-03"},
		{"books on the 3rd of November", "2026-11-03"},
		{"books Nov 3", "2026-11-03"},
		{"books November 3, 2025", "2025-11-03"},
		{"flowers 24 Dec", "2025-12-24"}, // a future day means last year
		{"rent 2026-11-01", "2026-11-01"},
		{"lunch 3 days ago", "2026-11-19"},
		{"lunch two weeks ago", "2026-11-08"},
	}
	for _, tt := range tests {
		got, _, ok := findDate(tt.give, sunday)
		if !ok || got != tt.want {
			t.Errorf("findDate(%q) = %q, %v; want %q", tt.give, got, ok, tt.want)
		}
	}
	// Around midnight the user's zone decides the day.
	lateUTC := time.Date(2026, 11, 22, 23, 30, 0, 0, time.UTC)
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	if got, _, _ := findDate("today", lateUTC.In(tokyo)); got != "2026-11-23" {
		t.Errorf("today in Tokyo at 23:30 UTC = %s, want 2026-11-23", got)
	}
	for _, bad := range []string{"31 Nov", "lunch at the market", "12 marbles"} {
		if d, _, ok := findDate(bad, sunday); ok {
			t.Errorf("findDate(%q) = %s", bad, d)
		}
	}
}

// Every range the offline model writes is in the shared grammar.
func TestRangesAreInTheGrammar(t *testing.T) {
	for _, give := range []string{"this year", "last year", "in 2024", "Q2", "q4 2025", "2026 Q1", "the third quarter", "in May", "since June",
		"since the start of the year", "since last Monday", "all time", "ever", "from 1 Oct to 15 Oct", "between 3 Nov and today", "past year", "past week", "in September 2024"} {
		r := rangeOf(give, sunday)
		if !contracts.ValidRange(r) || r == "this_month" {
			t.Errorf("rangeOf(%q) = %q", give, r)
		}
	}
	if r := rangeOf("since December", sunday); r != "since_2025-12-01" {
		t.Errorf("since December (said in November) = %s, want since_2025-12-01", r)
	}
	if r := rangeOf("how much in Q4", time.Date(2027, 2, 1, 9, 0, 0, 0, london)); r != "2026-Q4" {
		t.Errorf("Q4 asked in February = %s, want last year's", r)
	}
}

// A month named in a question is that month of the year named, or else
// the latest such month not in the future (this month included).
func TestMonthNamesInRanges(t *testing.T) {
	january := time.Date(2027, 1, 10, 9, 0, 0, 0, london)
	tests := []struct {
		give string
		now  time.Time
		want string
	}{
		{"what did I spend in September 2020", sunday, "2020-09"},
		{"where did my money go in March", sunday, "2026-03"},
		{"how much in Sept", sunday, "2026-09"},
		{"spending in sept 2025", sunday, "2025-09"},
		{"what about in November", sunday, "2026-11"},
		{"and in December?", sunday, "2025-12"},
		{"for Dec", january, "2026-12"},
		{"in March", january, "2026-03"},
		{"in January", january, "2027-01"},
		{"October 2024", sunday, "2024-10"},
		{"last month", sunday, "last_month"},
		{"last month", january, "last_month"},
	}
	for _, tt := range tests {
		if got := rangeOf(tt.give, tt.now); got != tt.want {
			t.Errorf("rangeOf(%q) on %s = %q, want %q", tt.give, tt.now.Format(time.DateOnly), got, tt.want)
		}
	}
}
