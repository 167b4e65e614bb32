package ingress_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/ingress"
)

// assertError checks an HTTP error answer: status and {error, detail?}.
func assertError(t *testing.T, resp *http.Response, status int, code string) {
	t.Helper()
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Errorf("status = %d (%s), want %d", resp.StatusCode, body, status)
		return
	}
	var e struct {
		Error  string `json:"error"`
		Detail string `json:"detail"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error != code {
		t.Errorf("body = %s, want {error: %q, detail?} (%v)", body, code, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
}

type call struct {
	method, path, token, contentType, accept, origin, body string
}

func (h *harness) do(c call) *http.Response {
	h.t.Helper()
	if c.method == "" {
		c.method = http.MethodPost
	}
	if c.path == "" {
		c.path = "/v1/chat"
	}
	req, err := http.NewRequest(c.method, h.srv.URL+c.path, strings.NewReader(c.body))
	if err != nil {
		h.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	if c.accept != "" {
		req.Header.Set("Accept", c.accept)
	}
	if c.origin != "" {
		req.Header.Set("Origin", c.origin)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

type chatAnswer struct {
	Answer               string                  `json:"answer"`
	ConfirmationRequired bool                    `json:"confirmationRequired"`
	Proposal             *contracts.Proposal     `json:"proposal"`
	Added                *contracts.ExpenseView  `json:"added"`
	Listed               []contracts.ExpenseView `json:"listed"`
	ConversationID       string                  `json:"conversation_id"`
	TurnID               string                  `json:"turn_id"`
}

func (h *harness) chat(token, body string) chatAnswer {
	h.t.Helper()
	resp := h.do(call{token: token, contentType: "application/json", body: body})
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		h.t.Fatalf("chat %s: status %d %s", body, resp.StatusCode, b)
	}
	var a chatAnswer
	if err := json.Unmarshal(b, &a); err != nil {
		h.t.Fatalf("chat answer %s: %v", b, err)
	}
	return a
}

func TestChatAnswers(t *testing.T) {
	h := newHarness(t)
	tok := h.token("acme", "ann")

	a := h.chat(tok, `{"history":[{"role":"user","content":"hi"},{"role":"assistant","content":"Hello!"}],"message":"how much?"}`)
	if a.Answer != "All good." || len(a.Listed) != 1 || a.ConversationID != ingress.DefaultChatConversation("ann") || a.TurnID == "" {
		t.Errorf("answer = %+v", a)
	}
	if a := h.chat(tok, `{"history":[],"question":"clarify this"}`); a.Answer != "Which account?" || a.ConfirmationRequired {
		t.Errorf("clarify = %+v", a)
	}
	p := h.chat(tok, `{"history":[],"message":"propose coffee","conversation_id":"c9"}`)
	if !p.ConfirmationRequired || p.Proposal == nil || p.Answer != "Add coffee, 3.50 EUR" || p.ConversationID != "c9" {
		t.Fatalf("proposal = %+v", p)
	}
	c := h.chat(tok, `{"history":[],"conversation_id":"c9","confirm":{"proposal_id":"`+p.Proposal.ProposalID+`","decision":"approve"}}`)
	if c.Answer != "Added coffee." || c.Added == nil || c.Added.Item != "coffee" {
		t.Errorf("confirm = %+v", c)
	}
	turn := <-h.turns
	for turn.Confirm == nil {
		turn = <-h.turns
	}
	if turn.ConversationID != "c9" || turn.Confirm.ProposalID != p.Proposal.ProposalID || turn.Confirm.Decision != "approve" {
		t.Errorf("confirm turn = %+v", turn)
	}
	// A turn that ends in error answers with its status.
	assertError(t, h.do(call{token: tok, contentType: "application/json", body: `{"history":[],"message":"forbidden thing"}`}), http.StatusForbidden, contracts.CodeForbidden)
}

func TestChatStatusCodes(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.RatePerSecond = 0.001; c.Burst = 1; c.ChatTimeout = 300 * time.Millisecond })
	tok := h.token("acme", "ann")
	const ok = `{"history":[],"message":"hello"}`
	tests := []struct {
		name   string
		give   call
		status int
		code   string
	}{
		{"GET", call{method: http.MethodGet, token: tok}, http.StatusMethodNotAllowed, "method_not_allowed"},
		{"PUT", call{method: http.MethodPut, token: tok, contentType: "application/json", body: ok}, http.StatusMethodNotAllowed, "method_not_allowed"},
		{"no token", call{contentType: "application/json", body: ok}, http.StatusUnauthorized, "unauthorized"},
		{"bad token", call{token: "abc.def.ghi", contentType: "application/json", body: ok}, http.StatusUnauthorized, "unauthorized"},
		{"foreign origin", call{token: tok, origin: "https://evil.example", contentType: "application/json", body: ok}, http.StatusForbidden, "forbidden"},
		{"text/plain", call{token: tok, contentType: "text/plain", body: ok}, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"no content type", call{token: tok, body: ok}, http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"malformed", call{token: tok, contentType: "application/json", body: `{"message":`}, http.StatusBadRequest, "bad_request"},
		{"unknown field", call{token: tok, contentType: "application/json", body: `{"message":"hi","tool":"delete_expense"}`}, http.StatusBadRequest, "bad_request"},
		{"bad history", call{token: tok, contentType: "application/json", body: `{"history":[{"role":"robot","content":"x"}],"message":"hi"}`}, http.StatusBadRequest, "bad_request"},
		{"nothing to say", call{token: tok, contentType: "application/json", body: `{"history":[]}`}, http.StatusBadRequest, "bad_request"},
		{"message and confirm", call{token: tok, contentType: "application/json", body: `{"message":"hi","confirm":{"proposal_id":"p1","decision":"approve"}}`}, http.StatusBadRequest, "bad_request"},
		{"bad decision", call{token: tok, contentType: "application/json", body: `{"confirm":{"proposal_id":"p1","decision":"maybe"}}`}, http.StatusBadRequest, "bad_request"},
		{"NUL in the message", call{token: tok, contentType: "application/json", body: `{"message":"add £4 ab\u0000cd today"}`}, http.StatusBadRequest, "bad_request"},
		{"invalid UTF-8", call{token: tok, contentType: "application/json", body: "{\"message\":\"caf\xe9\"}"}, http.StatusBadRequest, "bad_request"},
		{"too long", call{token: tok, contentType: "application/json", body: `{"message":"` + strings.Repeat("x", 5000) + `"}`}, http.StatusBadRequest, "bad_request"},
		// The burst is one: the first turn passes (and times out, as
		// nobody answers "silent"), the second is refused.
		{"timeout", call{token: tok, contentType: "application/json; charset=utf-8", body: `{"message":"silent"}`}, http.StatusGatewayTimeout, "timeout"},
		{"rate limited", call{token: tok, contentType: "application/json", body: ok}, http.StatusTooManyRequests, "rate_limited"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := h.do(tt.give)
			if tt.status == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow = %q", resp.Header.Get("Allow"))
			}
			assertError(t, resp, tt.status, tt.code)
		})
	}
	if got := h.metric("purser_ingress_http_requests_total", "route", "chat", "code", "429"); got != 1 {
		t.Errorf("http requests{chat,429} = %v", got)
	}
}

func TestChatServerSentEvents(t *testing.T) {
	h := newHarness(t)
	resp := h.do(call{token: h.token("acme", "ann"), contentType: "application/json", accept: "text/event-stream", body: `{"history":[],"message":"hello"}`})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var events []string
	var tokens string
	var turnID string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "done":
			var done struct {
				TurnID  string `json:"turn_id"`
				EndedBy string `json:"ended_by"`
			}
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &done); err != nil || done.TurnID != turnID || done.EndedBy != contracts.FrameAnswer {
				t.Errorf("done event %q (%v), want turn %s ended by answer", line, err, turnID)
			}
			events = append(events, event)
		case strings.HasPrefix(line, "data: "):
			var f contracts.ServerFrame
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &f); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
			if f.Type != event {
				t.Errorf("event %q carries a %q frame", event, f.Type)
			}
			if turnID == "" {
				turnID = f.TurnID
			}
			if f.TurnID != turnID {
				t.Errorf("frame of another turn: %+v", f)
			}
			events = append(events, event)
			if f.Token != nil {
				tokens += f.Token.Text
			}
			if f.Answer != nil && f.Answer.Content != "All good." {
				t.Errorf("answer = %+v", f.Answer)
			}
		case line == "":
		default:
			t.Errorf("unexpected line %q", line)
		}
	}
	// The stream ends with a done event after the answer; tokens are best
	// effort but travel the same core NATS path before the answer.
	if len(events) < 3 || events[0] != contracts.FrameAck || events[len(events)-2] != contracts.FrameAnswer || events[len(events)-1] != "done" {
		t.Fatalf("events = %v, want ack ... answer done", events)
	}
	if tokens != "" && tokens != "All good." {
		t.Errorf("tokens = %q", tokens)
	}
}

func TestNotificationsOverHTTP(t *testing.T) {
	h := newHarness(t)
	ann, bob := h.token("acme", "ann"), h.token("acme", "bob")
	h.notify("acme", "ann", "n1", "Imported 12 transactions")
	h.notify("acme", "ann", "n2", "Imported 3 transactions")
	h.notify("acme", "bob", "n3", "Bob's import")

	list := func(token, query string) []contracts.Notification {
		t.Helper()
		resp := h.do(call{method: http.MethodGet, path: "/v1/notifications" + query, token: token})
		defer resp.Body.Close()
		var body struct {
			Notifications []contracts.Notification `json:"notifications"`
		}
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("list %s: %d %s", query, resp.StatusCode, b)
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Notifications == nil {
			t.Fatalf("list %s: %+v %v", query, body, err)
		}
		return body.Notifications
	}
	eventually(t, "notifications stored", func() bool { return len(list(ann, "")) == 2 && len(list(bob, "")) == 1 })
	if got := list(ann, "?limit=1"); len(got) != 1 {
		t.Errorf("limit=1 gave %d", len(got))
	}

	resp := h.do(call{path: "/v1/notifications/n1/read", token: ann})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("mark read: %d", resp.StatusCode)
	}
	resp.Body.Close()
	unread := list(ann, "?unread=1")
	if len(unread) != 1 || unread[0].ID != "n2" {
		t.Errorf("unread = %+v, want n2 alone", unread)
	}
	for _, n := range list(ann, "") {
		if n.Read != (n.ID == "n1") {
			t.Errorf("%s read = %v", n.ID, n.Read)
		}
	}
	// Another user's id is not found, and stays unread for its owner.
	assertError(t, h.do(call{path: "/v1/notifications/n3/read", token: ann}), http.StatusNotFound, "not_found")
	assertError(t, h.do(call{path: "/v1/notifications/nope/read", token: ann}), http.StatusNotFound, "not_found")
	assertError(t, h.do(call{path: "/v1/notifications/a.b/read", token: ann}), http.StatusNotFound, "not_found")
	if got := list(bob, "?unread=1"); len(got) != 1 {
		t.Errorf("bob's unread = %+v", got)
	}
	resp = h.do(call{method: http.MethodGet, path: "/v1/notifications/n1/read", token: ann})
	if resp.Header.Get("Allow") != http.MethodPost {
		t.Errorf("Allow = %q", resp.Header.Get("Allow"))
	}
	assertError(t, resp, http.StatusMethodNotAllowed, "method_not_allowed")
	assertError(t, h.do(call{path: "/v1/notifications", token: ann}), http.StatusMethodNotAllowed, "method_not_allowed")
	assertError(t, h.do(call{method: http.MethodGet, path: "/v1/notifications?limit=0", token: ann}), http.StatusBadRequest, "bad_request")
	assertError(t, h.do(call{method: http.MethodGet, path: "/v1/notifications?unread=maybe", token: ann}), http.StatusBadRequest, "bad_request")
	assertError(t, h.do(call{method: http.MethodGet, path: "/v1/notifications"}), http.StatusUnauthorized, "unauthorized")
}

// With the bus down, a turn is refused at once with 503 (over HTTP) and an
// unavailable error frame (over the socket), not after the chat timeout.
func TestBusDownFailsFast(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.ChatTimeout = 10 * time.Minute })
	tok := h.token("acme", "ann")
	c := h.dial(tok)
	h.ns.Shutdown()
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	if f := c.next(contracts.FrameError); f.Error.Code != contracts.ErrCodeUnavailable || f.Error.ID != "m1" {
		t.Fatalf("socket error = %+v", f.Error)
	}
	assertError(t, h.do(call{token: tok, contentType: "application/json", body: `{"message":"hello"}`}), http.StatusServiceUnavailable, "unavailable")
}

// A turn that ended on a tool's rate limit answers 429 with the Retry-After
// the turn error carries (the tool's retry_after), never parsed from text.
func TestChatToolLimitCarriesRetryAfter(t *testing.T) {
	h := newHarness(t)
	resp := h.do(call{token: h.token("acme", "ann"), contentType: "application/json", body: `{"message":"limited please"}`})
	if got := resp.Header.Get("Retry-After"); got != "17" {
		t.Errorf("Retry-After = %q, want 17", got)
	}
	assertError(t, resp, http.StatusTooManyRequests, contracts.CodeLimit)
}
