package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

func TestFormatMoney(t *testing.T) {
	for give, want := range map[contracts.Money]string{
		{Minor: 0, Currency: "GBP"}: "£0.00", {Minor: 5, Currency: "USD"}: "$0.05", {Minor: 123456789, Currency: "EUR"}: "€1,234,567.89",
		{Minor: -1250, Currency: "GBP"}: "-£12.50", {Minor: 1000, Currency: "CHF"}: "10.00 CHF",
		{Minor: 1200, Currency: "JPY"}: "¥1,200", {Minor: 1250, Currency: "KWD"}: "1.250 KWD", {Minor: 1234567, Currency: "KRW"}: "₩1,234,567",
	} {
		if got := FormatMoney(give); got != want {
			t.Errorf("FormatMoney(%+v) = %q, want %q", give, got, want)
		}
	}
}

// hostile holds what a sender controls in a mail: a subject that hides the
// rest of a terminal line, a name that is a markdown link and a file name
// that reads backwards.
const (
	hostileSubject = "Statement \x1b[8m"
	hostileFrom    = "[click](https://evil.example) <alerts@evil.example>"
	hostileFile    = "statement\u202Efdp.csv"
)

// shownSafely fails t when text a person reads holds an escape, a bidi
// override or a live markdown link or autolink.
func shownSafely(t *testing.T, what, got string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\u202e", "[click]", "https://"} {
		if strings.Contains(got, bad) {
			t.Errorf("%s = %q, holds %q", what, got, bad)
		}
	}
}

func TestDescribeQuotesTextFromOutside(t *testing.T) {
	mail, _ := json.Marshal(contracts.MailSearch{Messages: []contracts.MailSummary{{ID: "m1", From: hostileFrom, Subject: hostileSubject,
		Date: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Attachments: []string{hostileFile}}}})
	fetched, _ := json.Marshal(contracts.AttachmentsFetched{MessageID: "m1", Documents: []contracts.QueuedDocument{{Filename: hostileFile, Status: "queued"}}})
	imports, _ := json.Marshal(contracts.RecentImports{Imports: []contracts.ImportSummary{{Filename: hostileFile, Status: "failed", Detail: hostileFrom},
		{Filename: hostileSubject, Status: "imported", Imported: 2}}})
	txs, _ := json.Marshal(contracts.TransactionList{Count: 1, Transactions: []contracts.TransactionView{{Date: "2026-11-02", Description: hostileFrom + hostileSubject,
		Amount: contracts.Money{Minor: -100, Currency: "GBP"}}}})
	expenses, _ := json.Marshal(contracts.ExpenseList{Range: "this_month", Expenses: []contracts.ExpenseView{{ID: 1, Item: hostileFrom, Category: hostileSubject,
		Amount: contracts.Money{Minor: 100, Currency: "GBP"}, Date: "2026-11-02"}}})
	tests := []struct {
		give StepRecord
		want string
	}{
		{give: StepRecord{Tool: contracts.ToolSearchGmail, OK: true, Data: mail},
			want: "I found these messages:\n- 1 Nov 2026, \"Statement \\[8m\" from \\[click\\](https\\://evil.example) \\<alerts@evil.example\\> (statementfdp.csv)\n" +
				"Say \"import the first one\" to process its statement."},
		{give: StepRecord{Tool: contracts.ToolFetchEmailAttachments, OK: true, Data: fetched},
			want: "I'm importing statementfdp.csv; you'll get a notification when it's done."},
		{give: StepRecord{Tool: contracts.ToolGetRecentImports, OK: true, Data: imports}},
		{give: StepRecord{Tool: contracts.ToolGetTransactions, OK: true, Data: txs}},
		{give: StepRecord{Tool: contracts.ToolListExpenses, OK: true, Data: expenses}},
		{give: StepRecord{Tool: contracts.ToolFetchEmailAttachments, OK: false, Error: "cannot read " + hostileFile + " " + hostileFrom}},
	}
	for _, tt := range tests {
		got := DescribeStepIn("en", tt.give)
		shownSafely(t, "DescribeStepIn(en, "+tt.give.Tool+")", got)
		if tt.want != "" && got != tt.want {
			t.Errorf("DescribeStepIn(en, %s) = %q, want %q", tt.give.Tool, got, tt.want)
		}
	}
}

func TestProposeFetchQuotesTheMail(t *testing.T) {
	m, _ := json.Marshal(contracts.MailSummary{ID: "m1", From: hostileFrom, Subject: hostileSubject, Date: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Attachments: []string{hostileFile}, NewSender: true, Previews: []string{hostileFile + ": 2 transactions; to check: " + hostileFrom}})
	s := State{Memory: Memory{"entities.message": m}}
	got := proposeFetch(json.RawMessage(`{"message_id":"m1"}`), s, Env{})
	shownSafely(t, "proposeFetch", got)
	want := "Import statementfdp.csv from \"Statement \\[8m\" (1 Nov 2026), sent by \\[click\\](https\\://evil.example) \\<alerts@evil.example\\>? " +
		"statementfdp.csv: 2 transactions; to check: \\[click\\](https\\://evil.example) \\<alerts@evil.example\\>. " +
		"You have never imported a statement from this sender before: check that it really is your bank."
	if got != want {
		t.Errorf("proposeFetch = %q, want %q", got, want)
	}
}
