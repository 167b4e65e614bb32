package ingress_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/ingress"
)

// Adversarial suites of the ingress's rules; each test names the rule it
// defends. The harness searches every log line of each test for the
// tokens it minted and the signing secret.

func (c *wsClient) sendBinary(b []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageBinary, b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// askAndAnswer sends a message on c and waits for its answer.
func askAndAnswer(t *testing.T, c *wsClient, id string) {
	t.Helper()
	c.send(`{"type":"message","id":"` + id + `","conversation_id":"c1","text":"hello"}`)
	if ack := c.next(contracts.FrameAck); ack.Ack == nil || ack.Ack.ID != id {
		t.Fatalf("ack = %+v, want %s", ack, id)
	}
	if ans := c.next(contracts.FrameAnswer); ans.Answer == nil || ans.Answer.Content != "All good." {
		t.Fatalf("answer = %+v", ans)
	}
}

// Rule: hostile frames. Invalid UTF-8, binary, malformed and absurdly
// nested frames each get a clear error and the socket goes on; a frame
// over the size limit closes only its own socket (1009). Another user's
// socket is unaffected throughout, and the sender can reconnect.
func TestHostileFramesOnTheSocket(t *testing.T) {
	h := newHarness(t)
	annTok := h.token("acme", "ann")
	ann := h.dial(annTok)
	bob := h.dial(h.token("acme", "bob"))
	tests := []struct {
		name   string
		binary bool
		give   string
		want   string
	}{
		{"invalid UTF-8", false, "{\"type\":\"message\",\"id\":\"m1\",\"conversation_id\":\"c1\",\"text\":\"caf\xe9\"}", "UTF-8"},
		{"a lone surrogate's bytes", false, "{\"type\":\"message\",\"id\":\"m1\",\"conversation_id\":\"c1\",\"text\":\"\xed\xa0\x80\"}", "UTF-8"},
		{"binary", true, `{"type":"ping"}`, "JSON text"},
		{"truncated JSON", false, `{"type":"message","id":"m1"`, ""},
		{"not an object", false, `"ping"`, ""},
		{"deep nesting", false, `{"type":"message","id":"m1","conversation_id":"c1","text":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, ""},
		{"NUL in the text", false, `{"type":"message","id":"m2","conversation_id":"c1","text":"a\u0000b"}`, "text"},
		{"a tool smuggled in", false, `{"type":"message","id":"m3","conversation_id":"c1","text":"hi","tool":"delete_expense","args":{"id":1}}`, "unknown field"},
		{"a tenant smuggled in", false, `{"type":"message","id":"m4","conversation_id":"c1","text":"hi","tenant_id":"bravo"}`, "unknown field"},
	}
	for i, tt := range tests {
		if tt.binary {
			ann.sendBinary([]byte(tt.give))
		} else {
			ann.send(tt.give)
		}
		f := ann.next(contracts.FrameError)
		if f.Error == nil || f.Error.Code != contracts.ErrCodeBadFrame || !strings.Contains(f.Error.Message, tt.want) {
			t.Errorf("%s: error = %+v, want bad_frame naming %q", tt.name, f.Error, tt.want)
		}
		// A frame readable enough to say its id is refused by that id, so
		// the client knows which of its frames not to send again.
		wantID := map[string]string{"invalid UTF-8": "m1", "a lone surrogate's bytes": "m1", "NUL in the text": "m2",
			"a tool smuggled in": "m3", "a tenant smuggled in": "m4"}[tt.name]
		if f.Error != nil && f.Error.ID != wantID {
			t.Errorf("%s: the error names frame %q, want %q", tt.name, f.Error.ID, wantID)
		}
		if f.Error != nil && len(f.Error.Message) > 300 {
			t.Errorf("%s: the error is %d bytes long; it must name the problem, not echo the frame", tt.name, len(f.Error.Message))
		}
		if i == len(tests)/2 {
			askAndAnswer(t, bob, "b1") // bob is served while ann misbehaves
		}
	}
	// None of it reached the orchestrator, and ann's socket still works.
	askAndAnswer(t, ann, "a1")
	for {
		select {
		case turn := <-h.turns:
			if turn.UserID == "ann" && turn.TurnID != "" && !strings.Contains(turn.Text, "hello") {
				t.Errorf("a hostile frame became a turn: %+v", turn)
			}
			continue
		default:
		}
		break
	}

	ann.send(`{"type":"message","id":"big","conversation_id":"c1","text":"` + strings.Repeat("x", 70<<10) + `"}`)
	if got := ann.closeStatus(); got != websocket.StatusMessageTooBig {
		t.Fatalf("close status = %v, want 1009", got)
	}
	askAndAnswer(t, bob, "b2")
	askAndAnswer(t, h.dial(annTok), "a2")
}

// Rule: hostile bodies over HTTP. A body over the limit is refused with
// 413, deep nesting and invalid UTF-8 with 400, each naming the problem;
// the service goes on answering the same user and others.
func TestHostileBodiesOverHTTP(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.MaxChatBytes = 8 << 10 })
	ann, bob := h.token("acme", "ann"), h.token("acme", "bob")
	tests := []struct {
		name   string
		body   string
		status int
		code   string
	}{
		{"over the size limit", `{"message":"` + strings.Repeat("x", 9<<10) + `"}`, http.StatusRequestEntityTooLarge, "too_large"},
		{"deep nesting", `{"message":` + strings.Repeat("[", 3000) + strings.Repeat("]", 3000) + `}`, http.StatusBadRequest, "bad_request"},
		{"invalid UTF-8 in a key", "{\"mess\xffage\":\"hi\"}", http.StatusBadRequest, "bad_request"},
		{"two objects", `{"message":"hi"}{"message":"again"}`, http.StatusBadRequest, "bad_request"},
		{"an array", `[{"message":"hi"}]`, http.StatusBadRequest, "bad_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertError(t, h.do(call{token: ann, contentType: "application/json", body: tt.body}), tt.status, tt.code)
		})
	}
	for _, tok := range []string{ann, bob} {
		if a := h.chat(tok, `{"message":"hello"}`); a.Answer != "All good." {
			t.Errorf("after the hostile bodies: %+v", a)
		}
	}
}

// Rule: rate limits are per user, over HTTP as over the socket. Ann's
// spent budget refuses her next turn with 429, never bob's in her tenant
// nor her namesake's in another tenant.
func TestRateLimitOverHTTPIsPerUser(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.RatePerSecond = 0.001; c.Burst = 1 })
	ann := h.token("acme", "ann")
	if a := h.chat(ann, `{"message":"hello"}`); a.Answer != "All good." {
		t.Fatalf("first turn: %+v", a)
	}
	resp := h.do(call{token: ann, contentType: "application/json", body: `{"message":"hello"}`})
	if resp.Header.Get("Retry-After") == "" {
		t.Errorf("429 without Retry-After")
	}
	assertError(t, resp, http.StatusTooManyRequests, "rate_limited")
	for _, who := range [][2]string{{"acme", "bob"}, {"bravo", "ann"}} {
		if a := h.chat(h.token(who[0], who[1]), `{"message":"hello"}`); a.Answer != "All good." {
			t.Errorf("%s/%s after ann's budget ran out: %+v", who[0], who[1], a)
		}
	}
}

// Rule: ownership over HTTP. Ids are the caller's to name, never to
// reach: another user's (or another tenant's namesake's) conversation
// reads as empty and is not listed, and their notification cannot be
// marked read.
func TestAnotherUsersIDsOverHTTP(t *testing.T) {
	h := newHarness(t)
	annTok := h.token("acme", "ann")
	ann := h.dial(annTok)
	ann.send(`{"type":"message","id":"m1","conversation_id":"ann-private","text":"my secret plan"}`)
	ann.next(contracts.FrameAnswer)
	h.notify("acme", "ann", "n-ann", "ann's notification")
	ann.next(contracts.FrameNotification)

	read := func(tok, path string) (int, string) {
		t.Helper()
		resp := h.do(call{method: http.MethodGet, path: path, token: tok})
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := read(annTok, "/v1/conversations/ann-private/frames"); status != http.StatusOK || !strings.Contains(body, "my secret plan") {
		t.Fatalf("ann's own history: %d %s", status, body)
	}
	for _, who := range [][2]string{{"acme", "bob"}, {"bravo", "ann"}} {
		tok := h.token(who[0], who[1])
		for _, path := range []string{"/v1/conversations/ann-private/frames", "/v1/conversations", "/v1/notifications"} {
			status, body := read(tok, path)
			if status != http.StatusOK || strings.Contains(body, "secret") || strings.Contains(body, "ann-private") || strings.Contains(body, "n-ann") {
				t.Errorf("%s/%s GET %s = %d %s", who[0], who[1], path, status, body)
			}
		}
		assertError(t, h.do(call{path: "/v1/notifications/n-ann/read", token: tok}), http.StatusNotFound, "not_found")
	}
	_, body := read(annTok, "/v1/notifications")
	var inbox struct {
		Notifications []contracts.Notification `json:"notifications"`
	}
	if err := json.Unmarshal([]byte(body), &inbox); err != nil || len(inbox.Notifications) != 1 || inbox.Notifications[0].Read {
		t.Errorf("ann's inbox after the others' attempts: %s (%v)", body, err)
	}
}
