package orchestrator

import (
	"encoding/json"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// An import is proposed from the preview of what it would add, or, when
// every statement holds nothing new, answered instead of proposed.
func TestImportProposalSaysWhatIsNew(t *testing.T) {
	args := json.RawMessage(`{"message_id":"m1"}`)
	october := contracts.FilePreview{Filename: "october.csv", Readable: true, New: 0, Already: 30,
		Summary: "october.csv: 30 transactions; dated 2026-10-01 to 2026-10-30; in GBP; net 228.36 GBP; 0 new, 30 already in your ledger"}
	november := contracts.FilePreview{Filename: "november.csv", Readable: true, New: 4, Already: 3,
		Summary:  "november.csv: 7 transactions; dated 2026-10-26 to 2026-11-05; in GBP; net -102.47 GBP; 4 new, 3 already in your ledger",
		Linked:   []string{"'Costa Coffee' -4.50 GBP on 2026-11-03 and your 'Costa coffee' -4.50 GBP on 2026-11-02"},
		Doubtful: []string{"'Pret A Manger' -12.00 GBP on 2026-11-04 and your 'lunch' -12.00 GBP on 2026-11-04"}}
	broken := contracts.FilePreview{Filename: "broken.csv", Summary: "broken.csv: cannot be read (not a statement we can read)"}
	tests := []struct {
		name                    string
		give                    contracts.ImportPreview
		wantSummary, wantAnswer string
	}{
		{name: "nothing new", give: contracts.ImportPreview{MessageID: "m1", Subject: "Statement", From: "bank@bank.example", Files: []contracts.FilePreview{october}},
			wantAnswer: "Nothing new in october.csv: all 30 transactions are already in your ledger."},
		{name: "some new", give: contracts.ImportPreview{MessageID: "m1", Subject: "Statement", From: "bank@bank.example", Files: []contracts.FilePreview{october, november}},
			wantSummary: `Import october.csv, november.csv from "Statement", sent by bank@bank.example? ` + quote(october.Summary) + ". " + quote(november.Summary) +
				". Counted once with what you typed: " + quote(november.Linked[0]) +
				". Kept as its own entry though it may be what you typed: " + quote(november.Doubtful[0]) + "."},
		{name: "a file that cannot be read is still proposed, so its failure is told", give: contracts.ImportPreview{MessageID: "m1", Subject: "Statement",
			From: "bank@bank.example", NewSender: true, Files: []contracts.FilePreview{october, broken}},
			wantSummary: `Import october.csv, broken.csv from "Statement", sent by bank@bank.example? ` + quote(october.Summary) + ". " + quote(broken.Summary) +
				". You have never imported a statement from this sender before: check that it really is your bank."},
		{name: "the preview of another message", give: contracts.ImportPreview{MessageID: "m2", Files: []contracts.FilePreview{october}},
			wantSummary: "Import the statements attached to that message?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, _ := json.Marshal(tt.give)
			summary, missing := seenFetch(args, data, State{}, Env{})
			if summary != tt.wantSummary || missing != tt.wantAnswer {
				t.Errorf("seenFetch =\n %q, %q\nwant\n %q, %q", summary, missing, tt.wantSummary, tt.wantAnswer)
			}
		})
	}
	if c := readImport(args); c.Tool != contracts.ToolPreviewImport || string(c.Args) != `{"message_id":"m1"}` {
		t.Errorf("lookup = %+v, want preview_import of the same message", c)
	}
}

// get_balance's answer says how many transfers between the person's own
// accounts were left out of the spending.
func TestBalanceSaysTransfersWereLeftOut(t *testing.T) {
	tests := []struct {
		give contracts.Balance
		want string
	}{
		{contracts.Balance{Range: "this_month", From: "2026-11-01", To: "2026-11-30", Total: []contracts.Money{{Minor: 1250, Currency: "GBP"}}, Count: 2, Transfers: 2},
			"You spent £12.50 this month across 2 expenses; 2 transfers between your accounts left out."},
		{contracts.Balance{Range: "this_month", From: "2026-11-01", To: "2026-11-30", Transfers: 1},
			"You have no expenses this month; 1 transfer between your accounts left out."},
		{contracts.Balance{Range: "this_month", From: "2026-11-01", To: "2026-11-30", Total: []contracts.Money{{Minor: 1250, Currency: "GBP"}}, Count: 2},
			"You spent £12.50 this month across 2 expenses."},
		// Narrowed to the person's words, the answer names them.
		{contracts.Balance{Range: "2026-10", From: "2026-10-01", To: "2026-10-31", Total: []contracts.Money{{Minor: 3098, Currency: "GBP"}}, Count: 3, Query: "Tesco"},
			"You spent £30.98 on Tesco in October 2026 across 3 expenses."},
		{contracts.Balance{Range: "this_month", From: "2026-11-01", To: "2026-11-30", Query: "coffee"},
			"You have nothing on coffee this month."},
	}
	for _, tt := range tests {
		data, _ := json.Marshal(tt.give)
		if got := describeBalance(english, data); got != tt.want {
			t.Errorf("describeBalance(%+v) = %q, want %q", tt.give, got, tt.want)
		}
	}
}

// Asked what a statement would add, the answer says it file by file, or
// that nothing is new.
func TestDescribePreviewImport(t *testing.T) {
	tests := []struct {
		give contracts.ImportPreview
		want string
	}{
		{contracts.ImportPreview{Files: []contracts.FilePreview{{Filename: "a.csv", Readable: true, Already: 3}, {Filename: "b.csv", Readable: true, Already: 1}}},
			"Nothing new: all 4 transactions are already in your ledger."},
		{contracts.ImportPreview{Files: []contracts.FilePreview{{Filename: "a.csv", Readable: true, New: 1, Already: 2, Summary: "a.csv: 3 transactions; 1 new, 2 already in your ledger",
			Doubtful: []string{"'PRET' -12.00 GBP on 2026-11-04 and your 'lunch' -12.00 GBP on 2026-11-04"}}}},
			"If imported:\n- a.csv: 3 transactions; 1 new, 2 already in your ledger\n  may be what you typed: 'PRET' -12.00 GBP on 2026-11-04 and your 'lunch' -12.00 GBP on 2026-11-04"},
		{contracts.ImportPreview{}, "That message has no statement attached."},
	}
	for _, tt := range tests {
		data, _ := json.Marshal(tt.give)
		if got := describePreviewImport(english, data); got != tt.want {
			t.Errorf("describePreviewImport =\n %q\nwant\n %q", got, tt.want)
		}
	}
}
