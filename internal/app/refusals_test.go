package app

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

// A viewer's change is refused as what it is, on every channel: 403
// forbidden over HTTP (no Retry-After, which would have a client retry
// forever), a forbidden error event over server-sent events and a
// forbidden error frame over the websocket; never a 429 or limit_reached.
func TestViewersChangeIsForbidden(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	vic := mint(t, info, "demo", "vic", auth.RoleViewer)
	change := `{"history":[],"message":"add £4 flat white today"}`

	t.Run("HTTP", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+info.HTTPAddr+"/v1/chat", strings.NewReader(change))
		req.Header.Set("Authorization", "Bearer "+vic)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"error":"forbidden"`) || !strings.Contains(string(body), "read-only") {
			t.Errorf("viewer's change = %d %s, want 403 forbidden saying read-only", resp.StatusCode, body)
		}
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			t.Errorf("viewer's change carries Retry-After: %s", ra)
		}
	})

	t.Run("SSE", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+info.HTTPAddr+"/v1/chat", strings.NewReader(`{"history":[],"message":"add £5 cake today"}`))
		req.Header.Set("Authorization", "Bearer "+vic)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		events := string(body)
		if !strings.Contains(events, "event: error") || !strings.Contains(events, `"code":"forbidden"`) || !strings.Contains(events, `"ended_by":"error"`) {
			t.Errorf("viewer's change as events, want a forbidden error ending the stream:\n%s", events)
		}
		if strings.Contains(events, contracts.CodeLimit) || strings.Contains(events, "retry_after_s") {
			t.Errorf("viewer's change is reported as a limit:\n%s", events)
		}
	})

	t.Run("websocket", func(t *testing.T) {
		c := dial(t, info, vic)
		c.send(`{"type":"message","id":"m-vic","conversation_id":"ws-vic","text":"add £6 lunch today"}`)
		f := c.next(contracts.FrameError)
		if f.Error == nil || f.Error.Code != contracts.ErrCodeForbidden || !strings.Contains(f.Error.Message, "read-only") || f.Error.RetryAfter != 0 {
			t.Errorf("viewer's change over the socket = %+v, want a forbidden error frame", f.Error)
		}
	})

	// Reading is still the viewer's to do.
	if status, body := chatCall(t, info, vic, `{"history":[],"message":"how much did I spend this month?"}`); status != http.StatusOK {
		t.Errorf("viewer's question = %d %v", status, body)
	}
}
