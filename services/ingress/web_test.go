package ingress_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/purser-ai/purser/services/ingress"
)

// Every page and script of the web front end is served under a strict
// policy: no inline script or style, no eval; the chat frame may be framed
// by this server's pages and by the allowed origins CSP can say exactly,
// and no other page may be framed at all. Files are revalidated by ETag.
func TestWebFilesPolicyAndCaching(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) {
		c.AllowedOrigins = []string{"books.example", "*.acme.example", "http://localhost:*", "bad?host", "a*b.example"}
	})
	for path, want := range map[string]string{
		"/":          "text/html",
		"/demo.js":   "text/javascript",
		"/demo.css":  "text/css",
		"/widget.js": "text/javascript",
		"/chat":      "text/html",
		"/chat.js":   "text/javascript",
		"/chat.css":  "text/css",
		"/app.css":   "text/css",
	} {
		resp, err := http.Get(h.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), want) || len(body) == 0 {
			t.Errorf("GET %s = %d %q, %d bytes", path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
			continue
		}
		csp := resp.Header.Get("Content-Security-Policy")
		for _, need := range []string{"default-src 'none'", "script-src 'self';", "style-src 'self';"} {
			if !strings.Contains(csp, need) {
				t.Errorf("GET %s: CSP %q lacks %q", path, csp, need)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("GET %s: CSP %q allows unsafe sources", path, csp)
		}
		ancestors := csp[strings.Index(csp, "frame-ancestors"):]
		switch path {
		case "/chat":
			if ancestors != "frame-ancestors 'self' books.example *.acme.example http://localhost:*" {
				t.Errorf("GET /chat: %q", ancestors)
			}
		default:
			if ancestors != "frame-ancestors 'none'" {
				t.Errorf("GET %s: %q", path, ancestors)
			}
		}
		if path == "/widget.js" && resp.Header.Get("Cross-Origin-Resource-Policy") != "cross-origin" {
			t.Errorf("GET /widget.js cannot be loaded by other sites: CORP %q", resp.Header.Get("Cross-Origin-Resource-Policy"))
		}
		if ct := string(body); strings.Contains(ct, "eval(") || strings.Contains(ct, "innerHTML") || strings.Contains(ct, "style=\"") || strings.Contains(ct, "<script>") {
			t.Errorf("GET %s uses eval, innerHTML or inline script or style", path)
		}

		etag := resp.Header.Get("ETag")
		req, _ := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
		req.Header.Set("If-None-Match", etag)
		again, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		again.Body.Close()
		if etag == "" || again.StatusCode != http.StatusNotModified || again.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s again with its ETag %q = %d, Cache-Control %q", path, etag, again.StatusCode, again.Header.Get("Cache-Control"))
		}
	}
}
