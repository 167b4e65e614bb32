package wording

import "testing"

func TestPlural(t *testing.T) {
	tests := []struct {
		give int
		want string
	}{{0, "s"}, {1, ""}, {2, "s"}, {-1, "s"}}
	for _, tt := range tests {
		if got := Plural(tt.give); got != tt.want {
			t.Errorf("Plural(%d) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
