package app

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
)

// getAudit reads GET /v1/audit as token: the status, the raw body and its
// entries.
func getAudit(t *testing.T, info Info, token string) (int, string, []map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+info.HTTPAddr+"/v1/audit?limit=50", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out struct {
		Audit []map[string]any `json:"audit"`
	}
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, string(b), out.Audit
}

// addExpense proposes and approves text as token.
func addExpense(t *testing.T, info Info, token, text string) {
	t.Helper()
	status, p := chatCall(t, info, token, `{"history":[],"message":"`+text+`"}`)
	proposal, _ := p["proposal"].(map[string]any)
	if status != http.StatusOK || proposal == nil {
		t.Fatalf("%q = %d %v, want a proposal", text, status, p)
	}
	confirm := `{"history":[],"confirm":{"proposal_id":"` + proposal["proposal_id"].(string) + `","decision":"approve"}}`
	if status, body := chatCall(t, info, token, confirm); status != http.StatusOK || body["added"] == nil {
		t.Fatalf("approve %q = %d %v", text, status, body)
	}
}

// The audit log by role: an owner reads who called what, when and with
// what outcome for the whole tenant, with other people's arguments left
// out; each person reads their own calls, arguments in full; no one reads
// another tenant's.
func TestAuditLogByRole(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	olga := info.DemoToken // demo's owner
	bob := mint(t, info, "demo", "bob", auth.RoleMember)
	vic := mint(t, info, "demo", "vic", auth.RoleViewer)
	eve := mint(t, info, "other", "eve", auth.RoleOwner)
	addExpense(t, info, bob, "add 42.17 EUR for zanzibar sushi on 2026-11-20")
	addExpense(t, info, olga, "add 9.31 EUR for quokka tea on 2026-11-19")
	for _, tok := range []string{bob, vic, eve} {
		if status, body := chatCall(t, info, tok, `{"history":[],"message":"how much did I spend this month?"}`); status != http.StatusOK {
			t.Fatalf("question = %d %v", status, body)
		}
	}
	bobsValues := []string{"zanzibar", "42.17", "2026-11-20"}
	olgasValues := []string{"quokka", "9.31", "2026-11-19"}

	status, raw, entries := getAudit(t, info, olga)
	if status != http.StatusOK {
		t.Fatalf("owner's audit read = %d %s", status, raw)
	}
	for _, v := range bobsValues {
		if strings.Contains(raw, v) {
			t.Errorf("owner's audit read holds bob's argument %q: %s", v, raw)
		}
	}
	for _, v := range olgasValues {
		if !strings.Contains(raw, v) {
			t.Errorf("owner's audit read lacks her own argument %q: %s", v, raw)
		}
	}
	users := map[string]int{}
	for _, e := range entries {
		users[e["user_id"].(string)]++
		if e["user_id"] != "demo" {
			if _, ok := e["args"]; ok {
				t.Errorf("owner sees another person's arguments: %v", e)
			}
			if e["tool"] == "" || e["outcome"] == "" || e["created_at"] == "" {
				t.Errorf("owner's view of another's call lacks what, outcome or when: %v", e)
			}
		}
	}
	if users["bob"] < 2 || users["vic"] < 1 || users["eve"] != 0 {
		t.Errorf("owner's audit read has calls by user %v; want bob's two or more, vic's, none of eve's (another tenant)", users)
	}

	status, raw, entries = getAudit(t, info, bob)
	if status != http.StatusOK {
		t.Fatalf("member's audit read = %d %s", status, raw)
	}
	for _, v := range bobsValues {
		if !strings.Contains(raw, v) {
			t.Errorf("member's audit read lacks his own argument %q: %s", v, raw)
		}
	}
	for _, v := range olgasValues {
		if strings.Contains(raw, v) {
			t.Errorf("member's audit read holds the owner's argument %q: %s", v, raw)
		}
	}
	for _, e := range entries {
		if e["user_id"] != "bob" {
			t.Errorf("member reads another person's call: %v", e)
		}
	}
	if len(entries) < 2 {
		t.Errorf("member reads %d of his calls, want his add and his question: %s", len(entries), raw)
	}

	for name, tok := range map[string]string{"viewer": vic, "other tenant's owner": eve} {
		status, raw, entries := getAudit(t, info, tok)
		if status != http.StatusOK || len(entries) == 0 {
			t.Errorf("%s's audit read = %d %s, want their own calls", name, status, raw)
		}
		for _, e := range entries {
			if e["user_id"] == "bob" || e["user_id"] == "demo" {
				t.Errorf("%s reads someone else's call: %v", name, e)
			}
		}
	}
}
