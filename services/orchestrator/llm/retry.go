package llm

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// retryAfterTransport notes the Retry-After of 429 and 5xx responses for
// the call that made the request (go-openai's errors do not carry headers).
type retryAfterTransport struct{ base http.RoundTripper }

type retryNote struct {
	mu    sync.Mutex
	after time.Duration
}

type retryNoteKey struct{}

func (t retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	if n, ok := req.Context().Value(retryNoteKey{}).(*retryNote); ok && (resp.StatusCode == 429 || resp.StatusCode >= 500) {
		n.mu.Lock()
		n.after = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		n.mu.Unlock()
	}
	return resp, nil
}

// parseRetryAfter reads seconds or an HTTP date; 0 when absent or bad.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// retryable reports whether err is a 429 or 5xx answer, or a transport
// failure that may pass.
func retryable(err error) bool {
	var api *openai.APIError
	if errors.As(err, &api) {
		return api.HTTPStatusCode == 429 || api.HTTPStatusCode >= 500
	}
	var req *openai.RequestError
	if errors.As(err, &req) {
		return req.HTTPStatusCode == 429 || req.HTTPStatusCode >= 500
	}
	return false
}

// statusOf is the HTTP status of err, or 0.
func statusOf(err error) int {
	var api *openai.APIError
	if errors.As(err, &api) {
		return api.HTTPStatusCode
	}
	var req *openai.RequestError
	if errors.As(err, &req) {
		return req.HTTPStatusCode
	}
	return 0
}

// withRetry runs call, retrying 429 and 5xx answers with back-off that
// honours Retry-After, within ctx.
func (m *Model) withRetry(ctx context.Context, call func(ctx context.Context) error) error {
	wait := m.cfg.Backoff
	for attempt := 0; ; attempt++ {
		note := &retryNote{}
		err := call(context.WithValue(ctx, retryNoteKey{}, note))
		if err == nil || !retryable(err) || attempt >= m.cfg.MaxRetries {
			return err
		}
		m.metrics.retries.Inc()
		d := wait
		note.mu.Lock()
		if note.after > 0 {
			d = note.after
		}
		note.mu.Unlock()
		m.log.Info("model call retried", "reason", retryReason(err), "attempt", attempt+1, "wait", d, "model", m.cfg.Model)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(d):
		}
		wait = min(wait*2, 20*time.Second)
	}
}

// retryReason names why a call is retried: its HTTP status, or a transport
// failure. It never includes the server's message, which may echo the key.
func retryReason(err error) string {
	if s := statusOf(err); s != 0 {
		return "HTTP " + strconv.Itoa(s)
	}
	return "transport error"
}
