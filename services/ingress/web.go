package ingress

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"regexp"
	"strings"
)

// The web front end: static files, no templates, no inline script or
// style, each served under a strict Content-Security-Policy.
//
//   - /widget.js is the loader a host page includes with one script tag;
//     it places an iframe showing /chat.
//   - /chat is the chat itself (chat.js, its words in chat-strings.js,
//     chat.css). Only this server's own
//     pages and the origins in AllowedOrigins may frame it.
//   - / is a demo host page, a pretend finance app carrying the widget.
//   - /app.css styles the Gmail pages (mailconnect.go).
//
// The chat talks to /v1/ws and /v1/notifications like any other client,
// from this server's origin, so a host page never touches the socket.
//
//go:embed web/index.html web/demo.js web/demo.css web/widget.js web/chat.html web/chat-strings.js web/chat.js web/chat.css web/app.css
var webFiles embed.FS

// webCSP is the policy of every page but /chat (the Gmail pages' too):
// framed by nobody.
const webCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// chatCSP is /chat's policy without its frame-ancestors, which name the
// allowed host origins.
const chatCSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

// cspSource is an origin pattern CSP can say as it is: an optional http(s)
// scheme, an optional leading wildcard label, a host, an optional port or
// wildcard port.
var cspSource = regexp.MustCompile(`^(?:https?://)?(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*(?::(?:[0-9]{1,5}|\*))?$`)

// frameAncestors turns AllowedOrigins (host patterns matched as in
// coder/websocket) into CSP frame-ancestors sources. A pattern CSP cannot
// say exactly (a ? or [ class, a wildcard inside a label) is left out:
// such a host may still use the socket, but not frame the chat.
func frameAncestors(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "*" {
			out = append(out, "*")
			continue
		}
		if cspSource.MatchString(p) {
			out = append(out, p)
		}
	}
	return out
}

type webFile struct {
	name, contentType string
	csp               string
	// corp is the Cross-Origin-Resource-Policy: cross-origin for what
	// other sites load (the widget script, the framed chat).
	corp string
	// script for every site: widget.js may be fetched with CORS (SRI).
	anyOrigin bool
}

func (in *Ingress) webRoutes(mux *http.ServeMux) {
	chat := chatCSP
	if more := frameAncestors(in.cfg.AllowedOrigins); len(more) > 0 {
		chat += " " + strings.Join(more, " ")
	}
	for pattern, file := range map[string]webFile{
		"GET /{$}":             {name: "web/index.html", contentType: "text/html; charset=utf-8", csp: webCSP, corp: "same-origin"},
		"GET /demo.js":         {name: "web/demo.js", contentType: "text/javascript; charset=utf-8", csp: webCSP, corp: "same-origin"},
		"GET /demo.css":        {name: "web/demo.css", contentType: "text/css; charset=utf-8", csp: webCSP, corp: "same-origin"},
		"GET /widget.js":       {name: "web/widget.js", contentType: "text/javascript; charset=utf-8", csp: webCSP, corp: "cross-origin", anyOrigin: true},
		"GET /chat":            {name: "web/chat.html", contentType: "text/html; charset=utf-8", csp: chat, corp: "cross-origin"},
		"GET /chat.js":         {name: "web/chat.js", contentType: "text/javascript; charset=utf-8", csp: webCSP, corp: "same-origin"},
		"GET /chat-strings.js": {name: "web/chat-strings.js", contentType: "text/javascript; charset=utf-8", csp: webCSP, corp: "same-origin"},
		"GET /chat.css":        {name: "web/chat.css", contentType: "text/css; charset=utf-8", csp: webCSP, corp: "same-origin"},
		"GET /app.css":         {name: "web/app.css", contentType: "text/css; charset=utf-8", csp: webCSP, corp: "same-origin"},
	} {
		body, err := webFiles.ReadFile(file.name)
		if err != nil {
			panic(err) // embedded at build time: cannot happen
		}
		sum := sha256.Sum256(body)
		etag := `"` + hex.EncodeToString(sum[:12]) + `"`
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Type", file.contentType)
			h.Set("Content-Security-Policy", file.csp)
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "no-referrer")
			// Revalidated on every use, answered 304 while unchanged: a
			// new release reaches every host page at once.
			h.Set("Cache-Control", "no-cache")
			h.Set("ETag", etag)
			h.Set("Cross-Origin-Resource-Policy", file.corp)
			if file.anyOrigin {
				h.Set("Access-Control-Allow-Origin", "*")
			}
			if match := r.Header.Get("If-None-Match"); match != "" && etagMatches(match, etag) {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			if r.Method == http.MethodHead {
				return
			}
			_, _ = w.Write(body)
		})
	}
}

// etagMatches reports whether an If-None-Match header names etag.
func etagMatches(header, etag string) bool {
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimPrefix(strings.TrimSpace(part), "W/")
		if part == etag || part == "*" {
			return true
		}
	}
	return false
}
