// Package gmailtest is an HTTP server speaking the Gmail REST paths purser
// uses (messages list and get, attachments get), over a fixture mailbox,
// checking the bearer token and recording requests.
package gmailtest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Attachment is one file of a fixture message.
type Attachment struct {
	Name, MediaType string
	Data            []byte
}

// Message is one fixture message.
type Message struct {
	ID, From, Subject, Body string
	Date                    time.Time
	Attachments             []Attachment
}

// Server serves a fixture mailbox for one access token.
type Server struct {
	URL   string // give to mailbox.Gmail as Endpoint
	Token string

	mu       sync.Mutex
	messages []Message
	requests []string
}

// New starts a server for the test's lifetime.
func New(t testing.TB, token string, msgs ...Message) *Server {
	s := &Server{Token: token, messages: msgs}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/"
	return s
}

// Requests returns "METHOD path?query" of every request.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": status, "message": msg}})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+s.Token {
		apiError(w, http.StatusUnauthorized, "Request had invalid authentication credentials.")
		return
	}
	if r.Method != http.MethodGet {
		apiError(w, http.StatusMethodNotAllowed, "read-only fixture")
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/gmail/v1/users/me/messages")
	if !ok {
		apiError(w, http.StatusNotFound, "not found")
		return
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	switch {
	case rest == "" || rest == "/":
		s.list(w, r)
	case len(parts) == 1:
		s.get(w, parts[0])
	case len(parts) == 3 && parts[1] == "attachments":
		s.attachment(w, parts[0], parts[2])
	default:
		apiError(w, http.StatusNotFound, "not found")
	}
}

func (s *Server) find(id string) (Message, bool) {
	for _, m := range s.messages {
		if m.ID == id {
			return m, true
		}
	}
	return Message{}, false
}

// list honours has:attachment and newer_than:Nd of the q parameter.
func (s *Server) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	days := 0
	for _, f := range strings.Fields(q) {
		if v, ok := strings.CutPrefix(f, "newer_than:"); ok {
			days, _ = strconv.Atoi(strings.TrimSuffix(v, "d"))
		}
	}
	var refs []map[string]string
	for _, m := range s.messages {
		if strings.Contains(q, "has:attachment") && len(m.Attachments) == 0 {
			continue
		}
		if days > 0 && time.Since(m.Date) > time.Duration(days)*24*time.Hour {
			continue
		}
		refs = append(refs, map[string]string{"id": m.ID, "threadId": m.ID})
	}
	writeJSON(w, http.StatusOK, map[string]any{"messages": refs, "resultSizeEstimate": len(refs)})
}

func b64(b []byte) string { return base64.URLEncoding.EncodeToString(b) }

func (s *Server) get(w http.ResponseWriter, id string) {
	m, ok := s.find(id)
	if !ok {
		apiError(w, http.StatusNotFound, "Requested entity was not found.")
		return
	}
	parts := []map[string]any{{"partId": "0", "mimeType": "text/plain", "filename": "", "body": map[string]any{"size": len(m.Body), "data": b64([]byte(m.Body))}}}
	for i, a := range m.Attachments {
		parts = append(parts, map[string]any{"partId": strconv.Itoa(i + 1), "mimeType": a.MediaType, "filename": a.Name,
			"body": map[string]any{"size": len(a.Data), "attachmentId": "att" + strconv.Itoa(i)}})
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": m.ID, "threadId": m.ID, "internalDate": strconv.FormatInt(m.Date.UnixMilli(), 10), "snippet": "",
		"payload": map[string]any{"mimeType": "multipart/mixed", "headers": []map[string]string{
			{"name": "From", "value": m.From}, {"name": "Subject", "value": m.Subject}, {"name": "Date", "value": m.Date.Format(time.RFC1123Z)}},
			"parts": parts},
	})
}

func (s *Server) attachment(w http.ResponseWriter, id, aid string) {
	m, ok := s.find(id)
	i, err := strconv.Atoi(strings.TrimPrefix(aid, "att"))
	if !ok || err != nil || i < 0 || i >= len(m.Attachments) {
		apiError(w, http.StatusNotFound, "Requested entity was not found.")
		return
	}
	a := m.Attachments[i]
	writeJSON(w, http.StatusOK, map[string]any{"size": len(a.Data), "data": b64(a.Data)})
}
