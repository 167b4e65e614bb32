package orchestrator

import (
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Every tool of the catalog has its row, with the catalog's kind, and a
// mutation says how its proposal reads: a tool added to the catalog
// without its row fails here.
func TestEveryCatalogToolHasARow(t *testing.T) {
	for _, spec := range contracts.Tools() {
		t.Run(spec.Name, func(t *testing.T) {
			row, ok := toolRows[spec.Name]
			if !ok {
				t.Fatalf("no row for catalog tool %q in toolRows (tools.go)", spec.Name)
			}
			if row.kind != spec.Kind {
				t.Errorf("row kind = %q, want the catalog's %q", row.kind, spec.Kind)
			}
			if row.kind == contracts.KindMutation && row.propose == nil {
				t.Errorf("mutation %q has no proposal sentence (propose)", spec.Name)
			}
			if _, ok := lookupTool(spec.Name); !ok {
				t.Errorf("lookupTool(%q) found nothing", spec.Name)
			}
		})
	}
}

// Every row is a catalog tool: a tool removed from the catalog leaves no
// row behind, and the built-in clarify is no row.
func TestEveryRowIsACatalogTool(t *testing.T) {
	for name := range toolRows {
		spec, ok := contracts.LookupTool(name)
		if !ok || isClarify(spec.Name) {
			t.Errorf("row %q is not a catalog tool", name)
		}
	}
	if _, ok := lookupTool(contracts.ToolAskClarification); ok {
		t.Errorf("lookupTool found %q, want it kept apart as a question", contracts.ToolAskClarification)
	}
}

func TestDefaultConfirmationPolicy(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{contracts.ToolAddExpense, true},
		{contracts.ToolFetchEmailAttachments, true},
		{contracts.ToolSetPreferences, true},
		{contracts.ToolListExpenses, false},
		{contracts.ToolGetChatHistory, false},
		{contracts.ToolSummarizeSpending, false},
		{contracts.ToolBiggestExpenses, false},
		{contracts.ToolRecurringPayments, false},
		{contracts.ToolPreviewImport, false}, // a read: what an import would add
		{contracts.ToolAskClarification, false},
		{"drop_tables", true}, // unknown: waits for a yes
	}
	for _, tt := range tests {
		if got := mutates(tt.give); got != tt.want {
			t.Errorf("mutates(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
