package orchestrator

import (
	"testing"
	"time"
)

// Sunday 22 November 2026, 10:00 in London.
var london, _ = time.LoadLocation("Europe/London")
var sunday = time.Date(2026, 11, 22, 10, 0, 0, 0, london)

func TestFindAmount(t *testing.T) {
	tests := []struct {
		give     string
		want     money
		wantItem string
	}{
		{"I spent £12.50 on lunch", money{"12.50", "GBP"}, "lunch"},
		{"coffee $3", money{"3", "USD"}, "coffee"},
		{"train €7,5 today", money{"7.50", "EUR"}, "train today"},
		{"paid 200 pounds for the electricity bill", money{"200", "GBP"}, "electricity bill"},
		{"add groceries 42.35 gbp", money{"42.35", "GBP"}, "groceries"},
		{"taxi 20 dollars", money{"20", "USD"}, "taxi"},
	}
	for _, tt := range tests {
		got, rest, ok := findAmount(tt.give)
		if !ok || got != tt.want {
			t.Errorf("findAmount(%q) = %+v, %v; want %+v", tt.give, got, ok, tt.want)
		}
		if item := itemFrom(rest); item != tt.wantItem {
			t.Errorf("itemFrom(%q) = %q, want %q", rest, item, tt.wantItem)
		}
	}
	if _, _, ok := findAmount("I want to add an item"); ok {
		t.Error("found an amount in a sentence without one")
	}
}

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
		{"flowers 24 Dec", "2025-12-24"}, // a future day means last year
		{"rent 2026-11-01", "2026-11-01"},
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
	if _, _, ok := findDate("31 Nov", sunday); ok {
		t.Error("31 Nov accepted")
	}
}

func TestFindCategoryAndNumber(t *testing.T) {
	if c, rest, ok := findCategory("coffee £3 in eating out"); !ok || c != "eating out" || itemFrom(rest) != "coffee £3" {
		t.Errorf("findCategory = %q %q %v", c, rest, ok)
	}
	for give, want := range map[string]int64{"delete expense 3": 3, "change #12 to £4": 12, "remove item no. 7": 7} {
		if got, ok := findNumber(give); !ok || got != want {
			t.Errorf("findNumber(%q) = %d, %v; want %d", give, got, ok, want)
		}
	}
}
