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

// Banks name exports anything: an attachment whose name does not say it
// is a statement is taken when its content is text or a PDF, but never
// when its name says it is a page, an invitation or a card, and an image
// only by its name (mail carries logos).
func TestStatementAttachmentsByContent(t *testing.T) {
	csv := []byte("Date,Amount,Description\n2026-10-01,-12.99,TESCO\n")
	cases := []struct {
		name string
		data []byte
		want bool
	}{
		{"statement.csv", csv, true},
		{"export.dat", csv, true},
		{"download", csv, true},
		{"camt053.053", []byte("<?xml version=\"1.0\"?><Document/>"), true},
		{"Kontoauszug", []byte("%PDF-1.7\n..."), true},
		{"invite.ics", []byte("BEGIN:VCALENDAR\n"), false},
		{"newsletter.html", []byte("<html><body>hi</body></html>"), false},
		{"logo", []byte("\x89PNG\r\n\x1a\n...."), false},
		{"scan.jpg", []byte("\xff\xd8\xff\xe0"), true},
		{"tool.bin", []byte("\x7fELF\x02\x01\x01\x00"), false},
	}
	for _, c := range cases {
		if got := isStatementFile(File{Name: c.name, Data: c.data}); got != c.want {
			t.Errorf("%s: taken %v, want %v", c.name, got, c.want)
		}
	}
}
