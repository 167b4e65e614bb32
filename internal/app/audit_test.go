package app

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
)

// The audit log is the tenant owner's to read over HTTP: a member or a
// viewer is refused, and an owner sees every user's tool calls of the
// tenant, never another tenant's.
func TestAuditLogIsForOwners(t *testing.T) {
	info := startUp(t)
	bob := mint(t, info, "demo", "bob", auth.RoleMember)
	vic := mint(t, info, "demo", "vic", auth.RoleViewer)
	eve := mint(t, info, "other", "eve", auth.RoleOwner)
	if status, body := chatCall(t, info, bob, `{"history":[],"message":"how much did I spend this month?"}`); status != http.StatusOK {
		t.Fatalf("bob's question = %d %v", status, body)
	}
	if status, body := chatCall(t, info, eve, `{"history":[],"message":"how much did I spend this month?"}`); status != http.StatusOK {
		t.Fatalf("eve's question = %d %v", status, body)
	}
	get := func(token string) (int, []map[string]any) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+info.HTTPAddr+"/v1/audit?limit=20", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Audit []map[string]any `json:"audit"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Audit
	}
	for name, tok := range map[string]string{"member": bob, "viewer": vic} {
		if status, _ := get(tok); status != http.StatusForbidden {
			t.Errorf("%s reads the audit log: %d", name, status)
		}
	}
	status, entries := get(info.DemoToken)
	if status != http.StatusOK {
		t.Fatalf("owner's audit read = %d", status)
	}
	sawBob := false
	for _, e := range entries {
		switch e["user_id"] {
		case "bob":
			sawBob = true
		case "eve":
			t.Errorf("demo's owner sees another tenant's call: %v", e)
		}
	}
	if !sawBob {
		t.Errorf("owner's audit log lacks bob's tool call: %v", entries)
	}
}
