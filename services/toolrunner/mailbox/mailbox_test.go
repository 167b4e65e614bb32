package mailbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/services/toolrunner"
	"github.com/purser-ai/purser/services/toolrunner/statements"
)

var now = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func demo(t *testing.T) Local {
	dir := t.TempDir()
	if err := WriteDemo(dir, "demo", "demo", now); err != nil {
		t.Fatal(err)
	}
	return Local{Dir: dir}
}

func TestDemoMailboxSearch(t *testing.T) {
	l := demo(t)
	ctx := context.Background()
	visa, err := l.Search(ctx, "demo", "demo", "visa statement", 90, 5, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(visa) == 0 || !strings.Contains(visa[0].Subject, "Visa statement for October 2026") || visa[0].Attachments[0] != "visa_statement_2026-10.csv" {
		t.Fatalf("'visa statement' ranks %+v first", visa)
	}
	both, _ := l.Search(ctx, "demo", "demo", "last bank statement", 90, 5, now)
	top := map[string]bool{}
	for _, m := range both[:2] {
		top[m.Attachments[0]] = true
	}
	if !top["visa_statement_2026-10.csv"] || !top["current_account_2026-10.ofx"] {
		t.Fatalf("'bank statement' top two = %+v", both)
	}
	for _, m := range both {
		if strings.Contains(m.Subject, "save on your bills") {
			t.Errorf("the newsletter matched a statement search: %+v", m)
		}
	}
	for i, m := range both {
		if strings.Contains(m.Subject, "Action required") && i < 2 {
			t.Errorf("the message without attachments outranks a statement: %+v", both)
		}
	}
	for _, m := range must(l.Search(ctx, "demo", "demo", "visa statement", 1, 5, now)) {
		if strings.Contains(m.Subject, "Visa") {
			t.Errorf("a one-day search found the three-day-old %+v", m)
		}
	}
	if other, _ := l.Search(ctx, "demo", "someone-else", "statement", 90, 5, now); len(other) != 0 {
		t.Errorf("another user sees the demo mail: %+v", other)
	}
}

// The demo attachments decode byte for byte and are statements purser reads.
func TestDemoAttachmentsAreStatements(t *testing.T) {
	l := demo(t)
	ctx := context.Background()
	found, _ := l.Search(ctx, "demo", "demo", "statement", 90, 5, now)
	want := map[string]int{"visa_statement_2026-10.csv": 12, "current_account_2026-10.ofx": 7}
	for _, m := range found {
		f, err := l.Fetch(ctx, "demo", "demo", m.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range f.Files {
			n, ok := want[a.Name]
			if !ok {
				continue
			}
			if a.Name == "visa_statement_2026-10.csv" && string(a.Data) != visaCSV(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)) {
				t.Fatalf("attachment bytes differ:\n%s", a.Data)
			}
			r, err := statements.Parse(a.Name, a.Data, statements.Options{DefaultCurrency: "GBP"})
			if err != nil || len(r.Transactions) != n {
				t.Fatalf("%s: %d transactions, %v; want %d", a.Name, len(r.Transactions), err, n)
			}
			delete(want, a.Name)
		}
	}
	if len(want) != 0 {
		t.Fatalf("statements not found: %v", want)
	}
	if _, err := l.Fetch(ctx, "demo", "demo", "m-nope"); !errors.Is(err, toolrunner.ErrNoMessage) {
		t.Fatalf("unknown id: %v", err)
	}
	if _, err := l.Fetch(ctx, "demo", "other", found[0].ID); !errors.Is(err, toolrunner.ErrNoMessage) {
		t.Fatalf("another user fetched demo mail: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestWriteDemoKeepsExistingMail(t *testing.T) {
	dir := t.TempDir()
	udir := filepath.Join(dir, "demo", "demo")
	if err := os.MkdirAll(udir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(udir, "mine.eml"), []byte("Subject: mine\r\n\r\nhello\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteDemo(dir, "demo", "demo", now); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(udir, "*.eml"))
	if len(files) != 1 {
		t.Fatalf("demo mail written over existing mail: %v", files)
	}
}

func TestMIMEEdgeCases(t *testing.T) {
	raw := "From: =?UTF-8?Q?Caf=C3=A9_Bank?= <b@bank.example>\r\n" +
		"Subject: =?UTF-8?B?UmVsZXbDqSBkZSBjb21wdGU=?=\r\n" +
		"Date: Mon, 02 Nov 2026 10:00:00 +0100\r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=outer\r\n\r\n" +
		"--outer\r\nContent-Type: multipart/alternative; boundary=inner\r\n\r\n" +
		"--inner\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nVotre relev=C3=A9 est joint.\r\n" +
		"--inner\r\nContent-Type: text/html\r\n\r\n<p>html</p>\r\n--inner--\r\n" +
		"--outer\r\nContent-Type: text/csv\r\nContent-Disposition: attachment; filename=\"=?UTF-8?Q?relev=C3=A9.csv?=\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		"RGF0ZSxBbW91bnQK\r\nMjAyNi0xMS0wMSwxLjAwCg==\r\n--outer--\r\n"
	m, err := parse(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if m.From != "Café Bank <b@bank.example>" || m.Subject != "Relevé de compte" || m.Date.Hour() != 9 {
		t.Fatalf("headers: %q %q %v", m.From, m.Subject, m.Date)
	}
	if !strings.Contains(m.Body, "Votre relevé est joint.") {
		t.Fatalf("body = %q", m.Body)
	}
	if len(m.Attachments) != 1 || m.Attachments[0].Name != "relevé.csv" || string(m.Attachments[0].Data) != "Date,Amount\n2026-11-01,1.00\n" {
		t.Fatalf("attachments = %+v", m.Attachments)
	}
	// A path in a filename is dropped.
	m, _ = parse(strings.NewReader("Content-Type: text/csv; name=\"../../etc/passwd\"\r\n\r\nx\r\n"))
	if len(m.Attachments) != 1 || m.Attachments[0].Name != "passwd" {
		t.Fatalf("path filename: %+v", m.Attachments)
	}
}

func TestRanking(t *testing.T) {
	msgs := []Candidate{
		{ID: "old-visa", From: "statements@visa.example", Subject: "Visa statement", Date: now.AddDate(0, 0, -60), Attachments: []string{"sep.csv"}},
		{ID: "new-visa", From: "statements@visa.example", Subject: "Visa statement", Date: now.AddDate(0, 0, -2), Attachments: []string{"oct.csv"}},
		{ID: "pdf-bank", From: "hello@bank.example", Subject: "Statement", Date: now.AddDate(0, 0, -1), Attachments: []string{"s.pdf"}},
		{ID: "chat", From: "friend@example.com", Subject: "lunch?", Date: now},
	}
	got := Rank("my last visa statement", msgs, 90, 10, now)
	if len(got) != 3 || got[0].ID != "new-visa" || got[1].ID != "old-visa" {
		t.Fatalf("ranking = %+v", got)
	}
	if got := Rank("visa statement", msgs, 90, 1, now); len(got) != 1 || got[0].ID != "new-visa" {
		t.Fatalf("limit 1 = %+v", got)
	}
}
