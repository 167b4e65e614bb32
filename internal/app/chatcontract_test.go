package app

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/purser-ai/purser/internal/auth"
)

// POST /v1/chat takes the original chat function's body in full: a
// userContext, a body with only history (its last user message is asked),
// and a confirm that restates the call ({tool, args}), which approves the
// one pending proposal it matches and is a 409 otherwise.
func TestChatKeepsTheOriginalContract(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	bob := mint(t, info, "demo", "bob", auth.RoleMember)
	status, body := chatCall(t, info, bob, `{"history":[{"role":"assistant","content":"Hi!"},{"role":"user","content":"add £3 tea today"}],
		"userContext":{"timezone":"Europe/Paris","currency":"GBP","locale":"en-GB"}}`)
	proposal, _ := body["proposal"].(map[string]any)
	if status != http.StatusOK || proposal == nil || proposal["tool"] != "add_expense" {
		t.Fatalf("history-only add = %d %v", status, body)
	}
	args, _ := json.Marshal(proposal["args"])

	// Restating another call matches nothing: 409, and nothing runs.
	other := strings.Replace(string(args), "tea", "coffee", 1)
	if status, body := chatCall(t, info, bob, `{"history":[],"confirm":{"tool":"add_expense","args":`+other+`}}`); status != http.StatusConflict {
		t.Fatalf("confirm of a call never proposed = %d %v", status, body)
	}
	if status, body := chatCall(t, info, bob, `{"history":[],"confirm":{"tool":"delete_expense","args":{"id":1}}}`); status != http.StatusConflict {
		t.Fatalf("confirm of another tool = %d %v", status, body)
	}
	// Restating the proposed call approves it, once.
	status, body = chatCall(t, info, bob, `{"history":[],"confirm":{"tool":"add_expense","args":`+string(args)+`}}`)
	added, _ := body["added"].(map[string]any)
	if status != http.StatusOK || added == nil || added["item"] != "tea" {
		t.Fatalf("legacy confirm = %d %v", status, body)
	}
	if status, body := chatCall(t, info, bob, `{"history":[],"confirm":{"tool":"add_expense","args":`+string(args)+`}}`); status != http.StatusConflict {
		t.Fatalf("the same legacy confirm again = %d %v", status, body)
	}
	// A userContext field purser does not know is refused, like any other.
	if status, _ := chatCall(t, info, bob, `{"history":[],"message":"hi","userContext":{"timezone":"UTC","ssn":"x"}}`); status != http.StatusBadRequest {
		t.Fatalf("unknown userContext field = %d", status)
	}
}

// The server-sent events of a turn carry each tool's result summary and
// end with a done event.
func TestChatEventsCarryToolResults(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	req, _ := http.NewRequest(http.MethodPost, "http://"+info.HTTPAddr+"/v1/chat", strings.NewReader(`{"history":[],"message":"how much did I spend this month?"}`))
	req.Header.Set("Authorization", "Bearer "+info.DemoToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	events := string(body)
	if !strings.Contains(events, "event: tool_result") || !strings.Contains(events, `"summary":"`) || !strings.HasSuffix(strings.TrimSpace(events), "}") ||
		!strings.Contains(events, "event: done") {
		t.Fatalf("events:\n%s", events)
	}
	if i, j := strings.Index(events, "event: answer"), strings.Index(events, "event: done"); i < 0 || j < i {
		t.Fatalf("done does not follow the answer:\n%s", events)
	}
}
