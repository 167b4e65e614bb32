package offline

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// Asked what a statement would add, the offline model previews the
// statement found; asked to import it, it imports.
func TestAskingWhatIsNewPreviewsTheStatement(t *testing.T) {
	found, _ := json.Marshal(contracts.MailSearch{Messages: []contracts.MailSummary{{ID: "m42", From: "Visa", Subject: "Your October statement", Attachments: []string{"october.csv"}}}})
	tests := []struct{ text, want string }{
		{"anything new in my visa statement?", `preview_import {"message_id":"m42"}`},
		{"what's new in my latest statement", `preview_import {"message_id":"m42"}`},
		{"is my visa statement already imported?", `preview_import {"message_id":"m42"}`},
		{"find my visa statement and import it", `fetch_email_attachments {"message_id":"m42"}`},
	}
	for _, tt := range tests {
		p := orchestrator.Prompt{Text: tt.text, Steps: []orchestrator.StepRecord{{Tool: contracts.ToolSearchGmail, OK: true, Data: found}}}
		d, _ := Model{}.Decide(context.Background(), p)
		got := ""
		if len(d.Calls) == 1 {
			got = d.Calls[0].Tool + " " + string(d.Calls[0].Args)
		}
		if got != tt.want {
			t.Errorf("%q after a search = %q (%+v), want %q", tt.text, got, d, tt.want)
		}
	}
}
