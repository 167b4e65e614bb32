package wording

import "testing"

func TestCount(t *testing.T) {
	tests := []struct {
		give int
		want string
	}{{0, "0 expenses"}, {1, "1 expense"}, {2, "2 expenses"}, {-1, "-1 expenses"}}
	for _, tt := range tests {
		if got := Count(tt.give, "expense"); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
