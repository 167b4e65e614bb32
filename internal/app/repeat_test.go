package app

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

// chatCall posts body to /v1/chat as token and returns the status and body.
func chatCall(t *testing.T, i Info, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+i.HTTPAddr+"/v1/chat", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/chat: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("POST /v1/chat answered %d %q", resp.StatusCode, b)
	}
	return resp.StatusCode, out
}

func mint(t *testing.T, i Info, tenant, user string, roles ...auth.Role) string {
	t.Helper()
	tok, err := auth.NewMinter(i.Secret, "purser", "purser", time.Now).Mint(tenant, user, roles, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Every user of a tenant has a default HTTP conversation of their own: the
// second user is not told that "chat" belongs to someone else.
func TestDefaultHTTPConversationIsPerUser(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	bob := mint(t, info, "demo", "bob", auth.RoleMember)
	for _, tok := range []string{info.DemoToken, bob} {
		status, body := chatCall(t, info, tok, `{"history":[],"message":"how much did I spend this month?"}`)
		if status != http.StatusOK {
			t.Fatalf("chat = %d %v", status, body)
		}
	}
	_, d := chatCall(t, info, info.DemoToken, `{"history":[],"message":"hello"}`)
	_, b := chatCall(t, info, bob, `{"history":[],"message":"hello"}`)
	if d["conversation_id"] == b["conversation_id"] {
		t.Fatalf("both users share conversation %v", d["conversation_id"])
	}
}

// A repeated confirm answers at once (409 over HTTP) and runs nothing
// twice; a reused message id over the socket is answered with the first
// turn's outcome; a NUL in a message is refused at the socket.
func TestRepeatsAnswerAtOnce(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	bob := mint(t, info, "demo", "bob", auth.RoleMember)
	status, p := chatCall(t, info, bob, `{"history":[],"message":"add £4 flat white today"}`)
	proposal, _ := p["proposal"].(map[string]any)
	if status != http.StatusOK || proposal == nil {
		t.Fatalf("add = %d %v", status, p)
	}
	confirm := `{"history":[],"confirm":{"proposal_id":"` + proposal["proposal_id"].(string) + `","decision":"approve"}}`
	if status, body := chatCall(t, info, bob, confirm); status != http.StatusOK || body["added"] == nil {
		t.Fatalf("approve = %d %v", status, body)
	}
	for range 2 {
		if status, body := chatCall(t, info, bob, confirm); status != http.StatusConflict || body["error"] != "already_decided" {
			t.Fatalf("repeated approve = %d %v, want 409 already_decided", status, body)
		}
	}
	_, list := chatCall(t, info, bob, `{"history":[],"message":"list my expenses this month"}`)
	if n := strings.Count(asJSON(t, list["listed"]), "flat white"); n != 1 {
		t.Fatalf("flat white listed %d times after repeated approvals: %s", n, asJSON(t, list))
	}

	c := dial(t, info, bob)
	msg := `{"type":"message","id":"m-reused","conversation_id":"ws1","text":"hello"}`
	c.send(msg)
	first := c.next(contracts.FrameAnswer)
	c.send(msg)
	again := c.next(contracts.FrameAnswer)
	if again.TurnID != first.TurnID || again.Seq != first.Seq || again.Answer.Content != first.Answer.Content {
		t.Fatalf("reused id answered with %+v, want the first answer %+v", again, first)
	}

	c.send(`{"type":"message","id":"m-nul","conversation_id":"ws1","text":"add £4 ab\u0000cd today"}`)
	f := c.next(contracts.FrameError)
	if f.Error == nil || !strings.Contains(f.Error.Message, "text: must not contain a NUL") {
		t.Fatalf("NUL message error = %+v", f.Error)
	}
}

func asJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
