package orchestrator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/pkg/contracts"
)

// TestRecordCitations: the records two searches found are cited once
// each, at their best score, best first, and tool outputs are not cited
// beside them; a turn with no search keeps its tool citations.
func TestRecordCitations(t *testing.T) {
	found := func(rs ...contracts.SearchResult) json.RawMessage {
		raw, _ := json.Marshal(contracts.SearchResults{Mode: contracts.SearchLexical, Results: rs})
		return raw
	}
	tesco1 := contracts.SearchResult{Kind: "entry", ID: "transaction-1", Title: "Tesco", URL: "/v1/ledger/entries/transaction-1", Score: 0.5}
	tesco2 := contracts.SearchResult{Kind: "entry", ID: "transaction-2", Title: "Tesco", URL: "/v1/ledger/entries/transaction-2", Score: 1}
	receipt := contracts.SearchResult{Kind: "document", ID: "doc-1", Title: "tesco.pdf", URL: "/v1/documents/doc-1", Score: 0.7}
	steps := []StepRecord{
		{CallID: "t1-s1-c0", Tool: contracts.ToolGetBalance, OK: true, Data: json.RawMessage(`{}`)},
		{CallID: "t1-s2-c0", Tool: contracts.ToolSearch, OK: true, Data: found(tesco1, receipt)},
		{CallID: "t1-s3-c0", Tool: contracts.ToolSearch, OK: true, Data: found(tesco2, func() contracts.SearchResult { r := tesco1; r.Score = 0.9; return r }())},
	}
	tools := []contracts.Citation{{CallID: "t1-s1-c0", Tool: contracts.ToolGetBalance}}
	got := recordCitations(steps, tools)
	want := []contracts.Citation{
		{CallID: "t1-s3-c0", Tool: contracts.ToolSearch, Kind: "entry", ID: "transaction-2", Title: "Tesco", URL: "/v1/ledger/entries/transaction-2", Score: 1},
		{CallID: "t1-s3-c0", Tool: contracts.ToolSearch, Kind: "entry", ID: "transaction-1", Title: "Tesco", URL: "/v1/ledger/entries/transaction-1", Score: 0.9},
		{CallID: "t1-s2-c0", Tool: contracts.ToolSearch, Kind: "document", ID: "doc-1", Title: "tesco.pdf", URL: "/v1/documents/doc-1", Score: 0.7},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("citations (-want +got):\n%s", diff)
	}
	if got := recordCitations(steps[:1], tools); !cmp.Equal(got, tools) {
		t.Errorf("no search: %+v, want the tool citations", got)
	}
	if got := describeSearch(english, found(tesco2)); !strings.Contains(got, "1 record") || !strings.Contains(got, "Tesco") {
		t.Errorf("describe = %q", got)
	}
}
