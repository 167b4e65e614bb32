package contracts

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCategoryAndRuleArgs(t *testing.T) {
	tests := []struct {
		tool      string
		give      string
		wantErr   string // substring; "" means valid
		wantCanon string
	}{
		{ToolSetRule, `{"category":"subscriptions","pattern":"Spotify"}`, "", `{"pattern":"Spotify","category":"subscriptions"}`},
		{ToolSetRule, `{"pattern":"Spotify"}`, "category: is required", ""},
		{ToolSetRule, `{"pattern":"x","category":"subscriptions"}`, "pattern: is too short", ""},
		{ToolSetRule, `{"pattern":"spotify","category":"subscriptions","user_id":"bob"}`, "user_id: unknown field", ""},
		{ToolDeleteRule, `{"pattern":"spotify","id":3}`, "id: unknown field", ""},
		{ToolRecategorize, `{"pattern":"unity","category":"software","range":"last_month"}`, "", `{"pattern":"unity","category":"software","range":"last_month"}`},
		{ToolRecategorize, `{"pattern":"unity","category":"software","range":"someday"}`, "range: must be a range", ""},
		{ToolMatchEntries, `{"pattern":"unity","range":null}`, "", `{"pattern":"unity"}`},
		{ToolAddCategory, `{"name":"pets"}`, "", `{"name":"pets"}`},
		{ToolAddCategory, `{"name":""}`, "name: is required", ""},
		{ToolListCategories, `{}`, "", `{}`},
		{ToolListCategories, `{"own_only":true}`, "", `{"own_only":true}`},
		{ToolListRules, `{"tenant_id":"other"}`, "tenant_id: unknown field", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.give, func(t *testing.T) {
			spec, ok := LookupTool(tt.tool)
			if !ok {
				t.Fatalf("tool %s not in catalog", tt.tool)
			}
			got, err := spec.CanonicalArgs(json.RawMessage(tt.give))
			if tt.wantErr == "" {
				if err != nil || string(got) != tt.wantCanon {
					t.Fatalf("canonical = %s (%v), want %s", got, err, tt.wantCanon)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
