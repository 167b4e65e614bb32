package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

const (
	rentTx    = `{"id":12,"date":"2026-09-01","description":"SO 12345","amount":{"minor":-90000,"currency":"GBP"},"review_status":"needs_review"}`
	found12   = `{"transactions":[` + rentTx + `],"totals":[{"minor":-90000,"currency":"GBP"}],"count":1,"id":12}`
	noTx99    = `{"transactions":[],"totals":[],"count":0,"id":99,"nearby":[` + rentTx + `]}`
	lastSept  = `{"scope":"any","change_id":41,"change":{"id":41,"kind":"import","created_at":"2026-11-20T09:00:00Z","filename":"sept.csv","transactions":30}}`
	lastAdd   = `{"scope":"any","change_id":7,"change":{"id":7,"kind":"expense_add","created_at":"2026-11-20T09:00:00Z","after":{"kind":"expense","id":5,"description":"coffee","amount":{"minor":-300,"currency":"GBP"},"date":"2026-11-20"}}}`
	lastTxFix = `{"scope":"any","change_id":8,"change":{"id":8,"kind":"transaction_update","created_at":"2026-11-20T09:00:00Z",` +
		`"before":{"kind":"transaction","id":12,"description":"SO 12345","amount":{"minor":-90000,"currency":"GBP"},"date":"2026-09-01","review_status":"needs_review"},` +
		`"after":{"kind":"transaction","id":12,"description":"SO 12345","amount":{"minor":-90000,"currency":"GBP"},"date":"2026-09-01","category":"rent","review_status":"ok"}}}`
	lastGone = `{"scope":"any","change_id":41}`
)

// A review fix and an undo are proposed only once a read has looked up
// what they touch: the proposal shows the transaction, or exactly what the
// undo reverts; a missing transaction or a change that can no longer be
// undone is answered at once, with nothing waiting for a yes.
func TestReviewAndUndoAreLookedUpBeforeTheyAreProposed(t *testing.T) {
	env := testEnv(t0)
	tests := []struct {
		name        string
		give        Call
		giveData    string
		wantLookup  string
		wantSummary string
		wantAnswer  string
	}{
		{"fix shows the transaction", Call{Tool: contracts.ToolUpdateTransaction, Args: json.RawMessage(`{"id":12,"category":"Rent","review":"clear"}`)},
			found12, `get_transactions {"id":12}`, "Change transaction #12 (SO 12345, -£900.00 on 2026-09-01, needs review): category none → rent, mark as reviewed?", ""},
		{"missing transaction", Call{Tool: contracts.ToolUpdateTransaction, Args: json.RawMessage(`{"id":99,"review":"clear"}`)},
			noTx99, `get_transactions {"id":99}`, "", "There is no transaction #99. The nearest numbers are: #12 SO 12345, -£900.00 on 2026-09-01, needs review."},
		{"undo an import", Call{Tool: contracts.ToolUndoChange, Args: json.RawMessage(`{"change_id":41}`)},
			lastSept, `get_last_change {"change_id":41}`, "Undo the import of sept.csv: remove its 30 transactions?", ""},
		{"undo an add", Call{Tool: contracts.ToolUndoChange, Args: json.RawMessage(`{"change_id":7}`)},
			lastAdd, `get_last_change {"change_id":7}`, "Undo adding expense #5 (coffee, £3.00 on 2026-11-20): delete it?", ""},
		{"undo a review fix", Call{Tool: contracts.ToolUndoChange, Args: json.RawMessage(`{"change_id":8}`)},
			lastTxFix, `get_last_change {"change_id":8}`,
			"Undo the change to transaction #12: put back SO 12345, -£900.00 on 2026-09-01, needs review (now SO 12345, -£900.00 on 2026-09-01 (rent))?", ""},
		{"undo of a change undone already", Call{Tool: contracts.ToolUndoChange, Args: json.RawMessage(`{"change_id":41}`)},
			lastGone, `get_last_change {"change_id":41}`, "", "There is nothing to undo: that change was undone already or does not exist."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, req := lookupOf(t, env, tt.give)
			if got := req.Tool + " " + string(req.Args); got != tt.wantLookup || req.ProposalID != "" {
				t.Fatalf("lookup = %s, want %s", got, tt.wantLookup)
			}
			got, eff := step(t, s, result(req.CallID, req.Tool, true, tt.giveData, ""), env)
			if eff.NeedModel || got.Turn != nil {
				t.Fatalf("the turn went on after the lookup: need model %v, turn %+v", eff.NeedModel, got.Turn)
			}
			if tt.wantAnswer != "" {
				if a := only[contracts.Answer](t, eff, contracts.TypeAnswer); a.Content != tt.wantAnswer {
					t.Errorf("answer = %q, want %q", a.Content, tt.wantAnswer)
				}
				if len(got.Proposals) != 0 || strings.Contains(types(eff), contracts.TypeProposal) {
					t.Errorf("proposed anyway: %+v", got.Proposals)
				}
				return
			}
			p := only[contracts.Proposal](t, eff, contracts.TypeProposal)
			if p.Summary != tt.wantSummary {
				t.Errorf("summary = %q\nwant      %q", p.Summary, tt.wantSummary)
			}
			if len(got.Proposals) != 1 || got.Proposals[0].Tool != tt.give.Tool {
				t.Fatalf("pending = %+v", got.Proposals)
			}
		})
	}
}

// What an undo, a fix and a lookup of the last change say once done.
func TestUndoSentences(t *testing.T) {
	tests := []struct {
		tool, data, want string
	}{
		{contracts.ToolUndoChange, `{"change":{"id":41,"kind":"import","created_at":"2026-11-20T09:00:00Z","filename":"sept.csv","transactions":30}}`,
			"Undone: removed the 30 transactions imported from sept.csv; you can import it again."},
		{contracts.ToolUndoChange, `{"change":{"id":9,"kind":"expense_delete","created_at":"2026-11-20T09:00:00Z","before":{"kind":"expense","id":5,"description":"coffee","amount":{"minor":-300,"currency":"GBP"},"date":"2026-11-20"}}}`,
			"Undone: restored expense #5: coffee, £3.00 on 2026-11-20."},
		{contracts.ToolGetLastChange, lastAdd, `Your last change: added expense #5: coffee, £3.00 on 2026-11-20. Say "undo that" to revert it.`},
		{contracts.ToolGetLastChange, `{"scope":"import"}`, "There is no import to undo."},
		{contracts.ToolUpdateTransaction, `{"transaction":{"id":12,"date":"2026-09-01","description":"SO 12345","amount":{"minor":-90000,"currency":"GBP"},"category":"rent","review_status":"ok"}}`,
			"Updated transaction #12: SO 12345, -£900.00 on 2026-09-01 (rent)."},
		{contracts.ToolGetTransactions, noTx99, "There is no transaction #99. The nearest numbers are: #12 SO 12345, -£900.00 on 2026-09-01, needs review."},
	}
	for _, tt := range tests {
		if got := DescribeStepIn("en", StepRecord{Tool: tt.tool, OK: true, Data: json.RawMessage(tt.data)}); got != tt.want {
			t.Errorf("%s: %q\nwant %q", tt.tool, got, tt.want)
		}
	}
}
