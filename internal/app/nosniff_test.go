package app

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// Every answer says X-Content-Type-Options: nosniff, whatever its route
// or status: the JSON API's answers and refusals, the pages, the probes,
// /metrics and a path that does not exist.
func TestEveryAnswerSaysNoSniff(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	base := "http://" + info.HTTPAddr
	tests := []struct {
		method, path, token, body string
		want                      int
	}{
		{http.MethodPost, "/v1/chat", info.DemoToken, `{"history":[],"message":"hello"}`, http.StatusOK},
		{http.MethodPost, "/v1/chat", info.DemoToken, `{"nope":1}`, http.StatusBadRequest},
		{http.MethodPost, "/v1/chat", "", `{"history":[],"message":"hello"}`, http.StatusUnauthorized},
		{http.MethodGet, "/v1/audit", info.DemoToken, ``, http.StatusOK},
		{http.MethodGet, "/v1/notifications", info.DemoToken, ``, http.StatusOK},
		{http.MethodGet, "/v1/conversations", info.DemoToken, ``, http.StatusOK},
		{http.MethodDelete, "/v1/conversations", info.DemoToken, ``, http.StatusMethodNotAllowed},
		{http.MethodGet, "/v1/mail", info.DemoToken, ``, http.StatusNotImplemented}, // no Gmail configured
		{http.MethodGet, "/v1/ws", "", ``, http.StatusUnauthorized},
		{http.MethodGet, "/healthz", "", ``, http.StatusOK},
		{http.MethodGet, "/readyz", "", ``, http.StatusOK},
		{http.MethodGet, "/metrics", "", ``, http.StatusOK},
		{http.MethodGet, "/chat", "", ``, http.StatusOK},
		{http.MethodGet, "/widget.js", "", ``, http.StatusOK},
		{http.MethodGet, "/no-such-page", "", ``, http.StatusNotFound},
	}
	client := &http.Client{Timeout: 30 * time.Second}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
		if tt.token != "" {
			req.Header.Set("Authorization", "Bearer "+tt.token)
		}
		if tt.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s = %d, want %d", tt.method, tt.path, resp.StatusCode, tt.want)
		}
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s (%d): X-Content-Type-Options = %q, want nosniff", tt.method, tt.path, resp.StatusCode, got)
		}
	}
}
