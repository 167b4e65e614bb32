package ingress_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/services/ingress"
)

// The origin check compares the scheme as well as the host, over HTTP and
// for the websocket upgrade alike: a page served over http is not the
// https server's own origin, nor the other way round. The server is https
// when the request came over TLS or a proxy says so (X-Forwarded-Proto).
func TestOriginSchemeIsCompared(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) {
		c.AllowedOrigins = []string{"https://books.example", "*.acme.example"}
	})
	host := strings.TrimPrefix(h.srv.URL, "http://")
	tok := h.token("acme", "ann")
	tests := []struct {
		name, origin, proto string
		want                bool
	}{
		{"no origin (not a browser)", "", "", true},
		{"own origin", "http://" + host, "", true},
		{"own host over https, server over http", "https://" + host, "", false},
		{"own host over https, behind a TLS proxy", "https://" + host, "https", true},
		{"own host over http, behind a TLS proxy", "http://" + host, "https", false},
		{"own host, another port", "http://" + strings.Split(host, ":")[0] + ":1", "", false},
		{"allowed with its scheme", "https://books.example", "", true},
		{"allowed host, other scheme", "http://books.example", "", false},
		{"host pattern without a scheme", "https://shop.acme.example", "", true},
		{"foreign", "http://evil.example", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := http.Header{"Authorization": {"Bearer " + tok}}
			if tt.origin != "" {
				hdr.Set("Origin", tt.origin)
			}
			if tt.proto != "" {
				hdr.Set("X-Forwarded-Proto", tt.proto)
			}
			want := http.StatusForbidden
			if tt.want {
				want = http.StatusOK
			}

			req, _ := http.NewRequest(http.MethodGet, h.srv.URL+"/v1/notifications", nil)
			req.Header = hdr.Clone()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if want == http.StatusForbidden {
				assertError(t, resp, http.StatusForbidden, "forbidden")
			} else {
				resp.Body.Close()
				if resp.StatusCode != want {
					t.Errorf("HTTP: status %d, want %d", resp.StatusCode, want)
				}
			}

			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			conn, resp, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{HTTPHeader: hdr.Clone(), Subprotocols: []string{auth.Subprotocol}})
			if err == nil {
				conn.CloseNow()
			}
			switch {
			case tt.want && err != nil:
				t.Errorf("websocket: refused (%v), want the upgrade", err)
			case !tt.want && err == nil:
				t.Error("websocket: upgraded, want 403")
			case !tt.want && (resp == nil || resp.StatusCode != http.StatusForbidden):
				t.Errorf("websocket: answered %v, want 403", resp)
			}
		})
	}
}
