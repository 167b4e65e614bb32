// Package llmtest is an HTTP server that speaks the OpenAI chat
// completions wire format, JSON and server-sent events, replying from a
// script, and recording what it was asked. Tests drive the real go-openai
// client against it.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// Reply is one scripted answer.
type Reply struct {
	Status int         // default 200
	Header http.Header // e.g. Retry-After
	Body   string      // a JSON body; when Chunks is nil
	Chunks []string    // SSE data payloads, sent as "data: <chunk>\n\n"
	// Cut ends an SSE reply right after the chunks: no finish_reason
	// chunk of its own, no [DONE], as a dropped connection would.
	Cut bool
}

// Request is one request the server received.
type Request struct {
	Header http.Header
	Body   map[string]any
}

// Server is a scripted OpenAI-compatible server.
type Server struct {
	URL string // base URL to give the client, ending in /v1
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// New starts a server for the test's lifetime.
func New(t testing.TB) *Server {
	s := &Server{t: t}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(s.srv.Close)
	return s
}

// Push queues replies, answered in order.
func (s *Server) Push(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, r...)
}

// Requests returns what the server received.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Pending is how many scripted replies are left.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.replies)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, `{"error":{"message":"bad json","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, Request{Header: r.Header.Clone(), Body: body})
	if len(s.replies) == 0 {
		s.mu.Unlock()
		s.t.Errorf("llmtest: unscripted request %d", len(s.requests))
		writeError(w, http.StatusInternalServerError, "no scripted reply")
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()

	for k, v := range rep.Header {
		w.Header()[k] = v
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.Chunks == nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, rep.Body)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(status)
	fl, _ := w.(http.Flusher)
	for _, c := range rep.Chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		if fl != nil {
			fl.Flush()
		}
	}
	if !rep.Cut {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "server_error"}})
	_, _ = w.Write(b)
}

// Error is a reply with an OpenAI error body; retryAfter "" sends none.
func Error(status int, retryAfter, message string) Reply {
	r := Reply{Status: status, Header: http.Header{}}
	if retryAfter != "" {
		r.Header.Set("Retry-After", retryAfter)
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "server_error"}})
	r.Body = string(b)
	return r
}

func chunk(delta map[string]any, finish string) string {
	choice := map[string]any{"index": 0, "delta": delta}
	if finish != "" {
		choice["finish_reason"] = finish
	} else {
		choice["finish_reason"] = nil
	}
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "test",
		"choices": []any{choice}})
	return string(b)
}

// Usage is the final usage chunk a server sends with include_usage.
func Usage(prompt, completion int) string {
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1, "model": "test",
		"choices": []any{}, "usage": map[string]int{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}})
	return string(b)
}

// Text streams an answer in the given pieces, then finish_reason stop.
func Text(pieces ...string) Reply {
	chunks := []string{chunk(map[string]any{"role": "assistant", "content": ""}, "")}
	for _, p := range pieces {
		chunks = append(chunks, chunk(map[string]any{"content": p}, ""))
	}
	chunks = append(chunks, chunk(map[string]any{}, "stop"))
	return Reply{Chunks: chunks}
}

// Call is one streamed tool call: Args is split into the given pieces.
type Call struct {
	Index int
	ID    string
	Name  string
	Args  []string
}

// ToolCalls streams the calls, interleaved piece by piece by index (as
// servers that stream parallel calls do), then finish_reason tool_calls.
func ToolCalls(calls ...Call) Reply {
	chunks := []string{chunk(map[string]any{"role": "assistant"}, "")}
	for _, c := range calls {
		chunks = append(chunks, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": c.Index, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""}}}}, ""))
	}
	for piece := 0; ; piece++ {
		more := false
		for _, c := range calls {
			if piece < len(c.Args) {
				more = true
				chunks = append(chunks, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": c.Index,
					"function": map[string]any{"arguments": c.Args[piece]}}}}, ""))
			}
		}
		if !more {
			break
		}
	}
	chunks = append(chunks, chunk(map[string]any{}, "tool_calls"))
	return Reply{Chunks: chunks}
}

// Finish is a chunk that ends a choice with the given reason.
func Finish(reason string) string { return chunk(map[string]any{}, reason) }

// Content is a chunk carrying answer text.
func Content(text string) string { return chunk(map[string]any{"content": text}, "") }

// JSON is a non-streamed reply whose message content is content.
func JSON(content string) Reply { return JSONFinish(content, "stop") }

// JSONFinish is JSON with a given finish_reason.
func JSONFinish(content, finish string) Reply {
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-test", "object": "chat.completion", "created": 1, "model": "test",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
	return Reply{Body: string(b)}
}

// Seconds formats a Retry-After of n seconds.
func Seconds(n int) string { return strconv.Itoa(n) }
