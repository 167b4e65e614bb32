package toolrunner

import (
	"testing"
	"time"
)

func TestResolveRange(t *testing.T) {
	london, _ := time.LoadLocation("Europe/London")
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	la, _ := time.LoadLocation("America/Los_Angeles")
	sun := time.Date(2026, 11, 22, 10, 0, 0, 0, london) // a Sunday
	tests := []struct {
		give     string
		now      time.Time
		loc      *time.Location
		from, to string
	}{
		{"today", sun, london, "2026-11-22", "2026-11-22"},
		{"yesterday", sun, london, "2026-11-21", "2026-11-21"},
		{"this_week", sun, london, "2026-11-16", "2026-11-22"},
		{"last_week", sun, london, "2026-11-09", "2026-11-15"},
		{"this_month", sun, london, "2026-11-01", "2026-11-30"},
		{"last_month", sun, london, "2026-10-01", "2026-10-31"},
		{"last_7_days", sun, london, "2026-11-16", "2026-11-22"},
		{"last_1_days", sun, london, "2026-11-22", "2026-11-22"},
		{"2026-02", sun, london, "2026-02-01", "2026-02-28"},
		{"2028-02", sun, london, "2028-02-01", "2028-02-29"}, // leap year
		{"2026-11-01..2026-11-15", sun, london, "2026-11-01", "2026-11-15"},
		// Month ends: last_month on 31 March is February, not a 31st that does not exist.
		{"last_month", time.Date(2026, 3, 31, 12, 0, 0, 0, london), london, "2026-02-01", "2026-02-28"},
		{"last_month", time.Date(2024, 3, 31, 12, 0, 0, 0, london), london, "2024-02-01", "2024-02-29"},
		{"last_month", time.Date(2027, 1, 15, 12, 0, 0, 0, london), london, "2026-12-01", "2026-12-31"},
		// Around midnight the user's zone decides the day: 23:30 UTC on the
		// 30th is already 1 December in Tokyo, still the 30th in Los Angeles.
		{"today", time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC), tokyo, "2026-12-01", "2026-12-01"},
		{"this_month", time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC), tokyo, "2026-12-01", "2026-12-31"},
		{"today", time.Date(2026, 12, 1, 5, 0, 0, 0, time.UTC), la, "2026-11-30", "2026-11-30"},
		// Quarters, years, since and all time.
		{"this_quarter", sun, london, "2026-10-01", "2026-12-31"},
		{"last_quarter", sun, london, "2026-07-01", "2026-09-30"},
		{"last_quarter", time.Date(2027, 2, 10, 9, 0, 0, 0, london), london, "2026-10-01", "2026-12-31"},
		{"this_year", sun, london, "2026-01-01", "2026-12-31"},
		{"last_year", sun, london, "2025-01-01", "2025-12-31"},
		{"this_year", time.Date(2026, 12, 31, 23, 30, 0, 0, time.UTC), tokyo, "2027-01-01", "2027-12-31"},
		{"2025", sun, london, "2025-01-01", "2025-12-31"},
		{"2026-Q1", sun, london, "2026-01-01", "2026-03-31"},
		{"2024-Q1", sun, london, "2024-01-01", "2024-03-31"},
		{"2026-Q4", sun, london, "2026-10-01", "2026-12-31"},
		{"since_2026-03-01", sun, london, "2026-03-01", "2026-11-22"},
		{"since_2026-11-22", sun, london, "2026-11-22", "2026-11-22"},
		{"all_time", sun, london, "0001-01-01", "9999-12-31"},
		// A week that crosses a year.
		{"this_week", time.Date(2027, 1, 1, 9, 0, 0, 0, london), london, "2026-12-28", "2027-01-03"},
	}
	for _, tt := range tests {
		from, to, err := ResolveRange(tt.give, tt.now, tt.loc)
		if err != nil || from != tt.from || to != tt.to {
			t.Errorf("ResolveRange(%q, %s) = %s..%s, %v; want %s..%s", tt.give, tt.now, from, to, err, tt.from, tt.to)
		}
	}
	for _, bad := range []string{"", "tomorrow", "last_0_days", "last_1000_days", "2026-13", "2026-02-30..2026-03-01", "2026-11-30..2026-11-01", "2026-1",
		"2026-Q0", "2026-Q5", "Q1", "since_2026-11-23", "since_2026-02-30", "since_march", "this_decade", "all", "26"} {
		if _, _, err := ResolveRange(bad, sun, london); err == nil {
			t.Errorf("ResolveRange(%q) accepted", bad)
		}
	}
}
