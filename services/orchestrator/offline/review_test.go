package offline

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// "Undo that" looks up the last change, then asks to undo exactly that
// one; with nothing to undo it says so and proposes nothing. A question
// about the last change is only answered.
func TestUndoFollowsTheLastChange(t *testing.T) {
	found := contracts.LastChange{Scope: "import", Change: &contracts.ChangeView{ID: 41, Kind: "import", Filename: "sept.csv", Transactions: 30}}
	none := contracts.LastChange{Scope: "any"}
	tests := []struct {
		text string
		out  contracts.LastChange
		want string
	}{
		{"undo the last import", found, `undo_change {"change_id":41}`},
		{"take that back", found, `undo_change {"change_id":41}`},
		{"undo that", none, "answer: There is nothing to undo."},
		{"undo the last import", contracts.LastChange{Scope: "import"}, "answer: There is no import to undo."},
		{"what was my last change?", found, "answer: Your last change: imported sept.csv (30 transactions)."},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			data, _ := json.Marshal(tt.out)
			d, err := Model{}.Decide(context.Background(), orchestrator.Prompt{Text: tt.text, Now: sunday, Timezone: "Europe/London",
				Steps: []orchestrator.StepRecord{{Tool: contracts.ToolGetLastChange, OK: true, Data: data}}})
			if err != nil {
				t.Fatal(err)
			}
			check(t, d, tt.want)
		})
	}
}
