package offline

import (
	"encoding/json"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

func TestSearchIntent(t *testing.T) {
	tests := []struct {
		give string
		want string // the search's canonical args; empty when not a search
	}{
		{"find my Costco receipts from 2020", `{"query":"Costco","from":"2020-01-01","to":"2020-12-31"}`},
		{"search for landlord", `{"query":"landlord"}`},
		{"find my payments to Tesco", `{"query":"Tesco","only":"entry"}`},
		{"where did I pay the tax office?", `{"query":"tax office","only":"entry"}`},
		{"look up messages about the deposit", `{"query":"deposit","only":"message"}`},
		{"find my Barclays statement from last month", ""},
		{"search my email for statements", ""},
		{"I spent 12 on lunch", ""},
	}
	spec, _ := contracts.LookupTool(contracts.ToolSearch)
	for _, tt := range tests {
		d, ok := searchIntent(tt.give)
		if !ok {
			if tt.want != "" {
				t.Errorf("searchIntent(%q) = not a search, want %s", tt.give, tt.want)
			}
			continue
		}
		if tt.want == "" || len(d.Calls) != 1 || d.Calls[0].Tool != contracts.ToolSearch {
			t.Errorf("searchIntent(%q) = %+v, want %q", tt.give, d, tt.want)
			continue
		}
		got, err := spec.CanonicalArgs(d.Calls[0].Args)
		if err != nil {
			t.Errorf("searchIntent(%q): args %s do not validate: %v", tt.give, d.Calls[0].Args, err)
			continue
		}
		if !json.Valid(got) || string(got) != tt.want {
			t.Errorf("searchIntent(%q) = %s, want %s", tt.give, got, tt.want)
		}
	}
}
