package ingress

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/purser-ai/purser/internal/auth"
)

// apiError is the body of every HTTP error: a short code and, when it
// helps, a detail a person can read. Neither ever quotes a token or the
// request body.
type apiError struct {
	Error  string `json:"error"`
	Detail string `json:"detail,omitempty"`
}

func writeJSONError(w http.ResponseWriter, status int, code, detail string) {
	writeJSON(w, status, apiError{Error: code, Detail: detail})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// statusWriter remembers the status written, for the request metric.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets server-sent events through the wrapper.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// api wraps an HTTP API handler: it counts the answer by route and status,
// and refuses other methods (405 with Allow) and foreign browser origins
// (403) before anything else, then authenticates (401).
func (in *Ingress) api(route, method string, w http.ResponseWriter, r *http.Request, h func(w http.ResponseWriter, r *http.Request, p auth.Principal)) {
	sw := &statusWriter{ResponseWriter: w}
	start := time.Now()
	defer func() {
		in.metrics.httpRequests.WithLabelValues(route, strconv.Itoa(sw.status)).Inc()
		in.metrics.httpSeconds.WithLabelValues(route).Observe(time.Since(start).Seconds())
	}()
	if r.Method != method {
		sw.Header().Set("Allow", method)
		writeJSONError(sw, http.StatusMethodNotAllowed, "method_not_allowed", "use "+method)
		return
	}
	if !in.originAllowed(r) {
		in.metrics.authFailures.WithLabelValues("origin").Inc()
		writeJSONError(sw, http.StatusForbidden, "forbidden", "requests from this origin are not allowed")
		return
	}
	p, ok := in.authenticate(sw, r)
	if !ok {
		return
	}
	h(sw, r, p)
}

// originAllowed is the origin rule of HTTP and the websocket alike: no
// Origin (not a browser), the server's own origin, scheme and host (https
// when the request came over TLS, here or at a proxy that says so), or
// one of AllowedOrigins. A page served over plain http is not the https
// server's own origin, nor the other way round.
func (in *Ingress) originAllowed(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if secureRequest(r) {
		scheme = "https"
	}
	if strings.EqualFold(u.Host, r.Host) && strings.EqualFold(u.Scheme, scheme) {
		return true
	}
	for _, p := range in.cfg.AllowedOrigins {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, err := path.Match(strings.ToLower(p), strings.ToLower(target)); err == nil && ok {
			return true
		}
	}
	return false
}

// isJSON reports whether the request says its body is JSON.
func isJSON(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// wantsEventStream reports whether the client asked for server-sent events.
func wantsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "text/event-stream" {
				return true
			}
		}
	}
	return false
}
