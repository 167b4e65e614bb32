package ingress

import (
	"embed"
	"net/http"
)

// The web chat page: static files, no templates, no inline script, served
// under a strict Content-Security-Policy. The page talks to /v1/ws and
// /v1/notifications like any other client.
//
//go:embed web/index.html web/app.js web/app.css
var webFiles embed.FS

const webCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func (in *Ingress) webRoutes(mux *http.ServeMux) {
	for pattern, file := range map[string]struct{ name, contentType string }{
		"GET /{$}":     {"web/index.html", "text/html; charset=utf-8"},
		"GET /app.js":  {"web/app.js", "text/javascript; charset=utf-8"},
		"GET /app.css": {"web/app.css", "text/css; charset=utf-8"},
	} {
		body, err := webFiles.ReadFile(file.name)
		if err != nil {
			panic(err) // embedded at build time: cannot happen
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Type", file.contentType)
			h.Set("Content-Security-Policy", webCSP)
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("Cache-Control", "no-cache")
			if r.Method == http.MethodHead {
				return
			}
			_, _ = w.Write(body)
		})
	}
}
