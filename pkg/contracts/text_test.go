package contracts

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPlainText(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{give: "Your September statement", want: "Your September statement"},
		{give: "  two\r\nlines\tand\v\fspaces  ", want: "two lines and spaces"},
		{give: "statement\u202Efdp.csv", want: "statementfdp.csv"},
		{give: "hide\x1b[8m the rest", want: "hide[8m the rest"},
		{give: "C1\u0085next\u009bline", want: "C1 nextline"},
		{give: "zero\u200bwidth\u200d joiner\ufeff and \u2066isolate\u2069 \u061c", want: "zerowidth joiner and isolate"},
		{give: "tag\U000E0041\U000E007F chars", want: "tag chars"},
		{give: "line\u2028separator", want: "line separator"},
		{give: "caf\xe9", want: "caf\uFFFD"},
		{give: "\x00\x07", want: ""},
	}
	for _, tt := range tests {
		if got := PlainText(tt.give); got != tt.want {
			t.Errorf("PlainText(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestQuoteText(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{give: "Your statement", want: "Your statement"},
		{give: "september_statement.csv", want: "september_statement.csv"},
		{give: "[click](https://evil.example)", want: `\[click\](https\://evil.example)`},
		{give: "Bank <alerts@bank.example>", want: `Bank \<alerts@bank.example\>`},
		{give: "\x1b[8mhidden", want: `\[8mhidden`},
		{give: "statement\u202Efdp.csv", want: "statementfdp.csv"},
		{give: "**bold** __b__ _i_ `code` ~~gone~~", want: `\*\*bold\*\* \_\_b\_\_ \_i\_ \` + "`" + `code\` + "`" + ` \~\~gone\~\~`},
		{give: "visit www.evil.example or http://evil.example", want: `visit www\.evil.example or http\://evil.example`},
		{give: "<https://evil.example>", want: `\<https\://evil.example\>`},
		{give: "![img](x)", want: `!\[img\](x)`},
		{give: "# Heading", want: `\# Heading`},
		{give: "- item", want: `\- item`},
		{give: "+ item", want: `\+ item`},
		{give: "> quote", want: `\> quote`},
		{give: "1. item", want: `1\. item`},
		{give: "12) item", want: `12\) item`},
		{give: "2024.01 statement", want: "2024.01 statement"},
		{give: "=== setext", want: `\=== setext`},
		{give: "| a | b |", want: `\| a | b |`},
		{give: "a #1 - b", want: "a #1 - b"},
		{give: "back\\slash", want: `back\\slash`},
		{give: "&#x202E; &amp; M&S &", want: `\&#x202E; \&amp; M&S &`},
		{give: "first\n# second\n- third", want: `first # second - third`},
		{give: "    indented code", want: "indented code"},
	}
	for _, tt := range tests {
		if got := QuoteText(tt.give); got != tt.want {
			t.Errorf("QuoteText(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestUnquoteText(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{give: `\[click\](https\://evil.example)`, want: "[click](https://evil.example)"},
		{give: `back\\slash`, want: `back\slash`},
		{give: `C:\Users\a`, want: `C:\Users\a`},
		{give: `end\`, want: `end\`},
		{give: "no escapes", want: "no escapes"},
	}
	for _, tt := range tests {
		if got := UnquoteText(tt.give); got != tt.want {
			t.Errorf("UnquoteText(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestVisibleText(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{give: "See [your bank](https://bank.example).\n\n- **one**", want: "See [your bank](https://bank.example).\n\n- **one**"},
		{give: "a\r\nb\rc\td", want: "a\nb\nc\td"},
		{give: "\x1b[8mhidden\x1b[0m \u202Efdp.csv \u200b\x7f\u009b", want: "[8mhidden[0m fdp.csv "},
		{give: "caf\xe9", want: "caf\uFFFD"},
	}
	for _, tt := range tests {
		if got := VisibleText(tt.give); got != tt.want {
			t.Errorf("VisibleText(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

func TestTerminalText(t *testing.T) {
	tests := []struct {
		give, want string
	}{
		{give: `Import a.csv from "\[8mhidden", sent by \[click\](https\://evil.example)?`, want: `Import a.csv from "[8mhidden", sent by [click](https://evil.example)?`},
		{give: "raw \x1b[8m\u009b8m\r\u202E from a client", want: "raw [8m8m\n from a client"},
		{give: "a raw byte \x9b", want: "a raw byte \uFFFD"},
		{give: "two\nlines\tand a tab", want: "two\nlines\tand a tab"},
	}
	for _, tt := range tests {
		if got := TerminalText(tt.give); got != tt.want {
			t.Errorf("TerminalText(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// FuzzQuoteText checks the neutraliser's promises for any input: one line
// of valid UTF-8 with nothing hidden, no markdown link or autolink left
// live, and nothing lost (unquoting gives PlainText back).
func FuzzQuoteText(f *testing.F) {
	for _, s := range []string{"[click](https://evil.example)", "statement\u202Efdp.csv", "\x1b[8m", "a\\*b", "1. x", "&#65;", "www.x", "_a_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := QuoteText(s)
		if !utf8.ValidString(q) || strings.ContainsFunc(q, hiddenRune) || strings.ContainsAny(q, "\n\r\t") {
			t.Fatalf("QuoteText(%q) = %q holds a hidden or line-breaking character", s, q)
		}
		if got, want := UnquoteText(q), PlainText(s); got != want {
			t.Fatalf("UnquoteText(QuoteText(%q)) = %q, want %q", s, got, want)
		}
		bare := withoutEscapes(q)
		for _, live := range []string{"[", "]", "://", "<", "*", "`", "~"} {
			if strings.Contains(bare, live) {
				t.Fatalf("QuoteText(%q) = %q holds a live %q", s, q, live)
			}
		}
	})
}

// withoutEscapes puts a space for every backslash escape (the backslash
// and the character it escapes): what a markdown reader may still read as
// markup.
func withoutEscapes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
