// Package bench drives a running purser the way many people would, and
// the same load through a bare JetStream pipeline for comparison: what
// "purser bench" runs.
package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// StubModel is an OpenAI-compatible chat-completions server for load
// tests: every call waits Latency in all, and streams its reply (tool
// protocol, server-sent events) the way model servers do, the first piece
// after half the latency. It reads just enough of the conversation to
// play the bench's turns: "add ..." with an amount asks for add_expense,
// without one it asks how much, a question about spending asks for
// list_expenses, and anything after a tool result is answered in text.
// A tag at the end of the person's message (Tag) is not read as theirs.
type StubModel struct {
	Latency time.Duration
	// Pieces is how many pieces an answer streams in. Default 8.
	Pieces int
	// Calls, when set, logs every call: when its reply's parts were
	// written, its prompt's size, and the conversation and message its tag
	// names.
	Calls *CallLog
}

func (m StubModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	call := Call{Received: time.Now()}
	var req chatRequest
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	last, lastUser := "", ""
	for _, msg := range req.Messages {
		last = msg.Role
		if msg.Role == "user" {
			lastUser = msg.Content
		}
	}
	lastUser, call.Conv, call.Turn, _ = cutTag(lastUser)
	lastUser = strings.ToLower(lastUser)
	if m.Calls != nil {
		call.PromptTokens = req.PromptTokens()
		defer func() {
			if !call.Done.IsZero() {
				m.Calls.add(call)
			}
		}()
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	// send writes a chunk; one with content or a tool call is the first
	// token (the role alone is not).
	send := func(delta map[string]any, finish string) {
		choice := map[string]any{"index": 0, "delta": delta, "finish_reason": nil}
		if finish != "" {
			choice["finish_reason"] = finish
		}
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-stub", "object": "chat.completion.chunk", "created": time.Now().Unix(),
			"model": "stub", "choices": []any{choice}})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
		_, text := delta["content"].(string)
		_, tool := delta["tool_calls"]
		if call.FirstToken.IsZero() && ((text && delta["content"] != "") || tool) {
			call.FirstToken = time.Now()
		}
		if call.Ready.IsZero() && text && delta["content"] != "" {
			call.Ready = call.FirstToken
		}
	}
	done := func() {
		fmt.Fprint(w, "data: [DONE]\n\n")
		if fl != nil {
			fl.Flush()
		}
		call.Done = time.Now()
		if call.Ready.IsZero() {
			call.Ready = call.Done // a tool call is whole only at its end
		}
	}
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	if !wait(m.Latency / 2) {
		return
	}
	toolCall := func(name, args string) {
		send(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": 0, "id": "call_stub", "type": "function",
			"function": map[string]any{"name": name, "arguments": args}}}}, "")
		call.Reply = name
		if wait(m.Latency / 2) {
			send(map[string]any{}, "tool_calls")
			done()
		}
	}
	call.Reply = "text"
	switch {
	case last == "tool":
		m.text(send, wait, done, "Done: here is what I found for you, in a few words.")
	case strings.HasPrefix(lastUser, "add ") && strings.ContainsAny(lastUser, "0123456789"):
		toolCall("add_expense", `{"item":"coffee","amount":"3.50","category":"food"}`)
	case strings.HasPrefix(lastUser, "add "):
		toolCall("ask_clarification", `{"question":"How much was it?"}`)
	case strings.Contains(lastUser, "spend"):
		toolCall("list_expenses", `{"range":"this_month"}`)
	default:
		m.text(send, wait, done, "Hello! Ask me about your expenses, or tell me what you spent.")
	}
}

func (m StubModel) text(send func(map[string]any, string), wait func(time.Duration) bool, done func(), content string) {
	pieces := m.Pieces
	if pieces <= 0 {
		pieces = 8
	}
	words := strings.SplitAfter(content, " ")
	send(map[string]any{"role": "assistant", "content": ""}, "")
	for i := range pieces {
		lo, hi := i*len(words)/pieces, (i+1)*len(words)/pieces
		if lo < hi {
			send(map[string]any{"content": strings.Join(words[lo:hi], "")}, "")
		}
		if i < pieces-1 && !wait(m.Latency/2/time.Duration(pieces)) {
			return
		}
	}
	send(map[string]any{}, "stop")
	done()
}
