package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// uploadsInFront serves the app through a proxy that answers POST
// /v1/uploads itself, following the upload contract: multipart with a
// file, an optional message and conversation_id; 413, 415 and 400 as
// JSON errors; with Accept: text/event-stream, "uploaded" and then the
// turn's events. The turn is a real one, asked of the app's /v1/chat, so
// its frames reach the page's socket too. It returns the page's base URL
// and the messages the uploads carried.
func uploadsInFront(t *testing.T, info Info) (string, *saidLog) {
	t.Helper()
	app, _ := url.Parse("http://" + info.HTTPAddr)
	proxy := httputil.NewSingleHostReverseProxy(app)
	said := &saidLog{}
	mux := http.NewServeMux()
	mux.Handle("/", proxy)
	mux.HandleFunc("POST /v1/uploads", func(w http.ResponseWriter, r *http.Request) {
		fail := func(status int, code, msg string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": msg}})
		}
		const limit = 20 << 20
		r.Body = http.MaxBytesReader(w, r.Body, limit+64<<10)
		mr, err := r.MultipartReader()
		if err != nil {
			fail(http.StatusBadRequest, "bad_request", "the body must be multipart/form-data")
			return
		}
		var name, message, conv string
		size := -1
		for {
			p, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				fail(http.StatusRequestEntityTooLarge, "too_large", "the file is larger than the limit of 20 MiB")
				return
			}
			if err != nil {
				fail(http.StatusBadRequest, "bad_request", err.Error())
				return
			}
			data, err := io.ReadAll(p)
			if errors.As(err, &tooBig) || len(data) > limit {
				fail(http.StatusRequestEntityTooLarge, "too_large", "the file is larger than the limit of 20 MiB")
				return
			}
			switch p.FormName() {
			case "file":
				name, size = p.FileName(), len(data)
			case "message":
				message = string(data)
			case "conversation_id":
				conv = string(data)
			default:
				fail(http.StatusBadRequest, "bad_request", "unknown field "+p.FormName())
				return
			}
		}
		if size < 0 {
			fail(http.StatusBadRequest, "bad_request", "a file is required")
			return
		}
		kind := ""
		switch strings.ToLower(filepath.Ext(name)) {
		case ".csv", ".ofx", ".qfx", ".xml", ".sta", ".940", ".qif":
			kind = "statement"
		case ".png", ".jpg", ".jpeg", ".heic", ".webp":
			kind = "receipt"
		case ".pdf":
			kind = "document"
		default:
			fail(http.StatusUnsupportedMediaType, "unsupported_media_type",
				"accepted kinds are CSV, OFX, QFX, camt XML, MT940 and QIF statements, PDF documents and receipt images (PNG, JPEG, HEIC, WebP)")
			return
		}
		said.add(message)
		body, _ := json.Marshal(map[string]string{"message": "Find my last Visa statement and process it", "conversation_id": conv})
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, app.String()+"/v1/chat", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", r.Header.Get("Authorization"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fail(http.StatusServiceUnavailable, "unavailable", err.Error())
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(resp.StatusCode)
			_, _ = io.Copy(w, resp.Body)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "event: uploaded\ndata: {\"document_id\":\"doc-1\",\"size\":%d,\"kind\":%q}\n\n", size, kind)
		w.(http.Flusher).Flush()
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				w.(http.Flusher).Flush()
			}
			if err != nil {
				return
			}
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, said
}

type saidLog struct {
	mu   sync.Mutex
	msgs []string
}

func (l *saidLog) add(m string) { l.mu.Lock(); l.msgs = append(l.msgs, m); l.mu.Unlock() }
func (l *saidLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}
