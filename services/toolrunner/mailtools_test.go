package toolrunner

import "testing"

func TestSenderDomain(t *testing.T) {
	tests := []struct{ give, want string }{
		{"Northbank Visa <statements@northbank.example>", "northbank.example"},
		{"alerts@Mail.Bank.Example", "mail.bank.example"},
		{`"Bank, Inc" <a@b.example>`, "b.example"},
		{"broken <x@evil.example", "evil.example"},
		{"no address", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := SenderDomain(tt.give); got != tt.want {
			t.Errorf("SenderDomain(%q) = %q, want %q", tt.give, got, tt.want)
		}
	}
}
