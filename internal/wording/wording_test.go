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

// A cut never splits a character: "é" is two bytes, "日" three.
func TestCutKeepsCharactersWhole(t *testing.T) {
	cases := []struct {
		s     string
		bytes int
		want  string
	}{{"café", 4, "caf"}, {"café", 5, "café"}, {"日本", 4, "日"}, {"日本", 2, ""}, {"abc", 10, "abc"}}
	for _, c := range cases {
		if got := CutBytes(c.s, c.bytes); got != c.want {
			t.Errorf("CutBytes(%q, %d) = %q, want %q", c.s, c.bytes, got, c.want)
		}
	}
	if got := CutRunes("日本語です", 3); got != "日本語" {
		t.Errorf("CutRunes = %q, want 日本語", got)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{20 << 20: "20 MiB", 3 << 19: "1.5 MiB", 12 << 10: "12 KiB", 300: "300 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestShorten(t *testing.T) {
	if got := Shorten("Kontoauszug", 6); got != "Konto…" {
		t.Errorf("Shorten = %q, want Konto…", got)
	}
	if got := Shorten("kurz", 6); got != "kurz" {
		t.Errorf("Shorten = %q, want kurz", got)
	}
}
