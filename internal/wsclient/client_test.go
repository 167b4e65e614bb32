package wsclient_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/wsclient"
	"github.com/purser-ai/purser/pkg/contracts"
)

// startPurser runs `purser up` in this process on free ports and a
// temporary data folder; the test's cleanup stops it.
func startPurser(t *testing.T) app.Info {
	t.Helper()
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.NATSListen = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan app.Info, 1)
	done := make(chan error, 1)
	go func() {
		done <- app.Up(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), func(i app.Info) { ready <- i })
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Up returned %v at shutdown", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Up did not stop within 30 s")
		}
	})
	select {
	case i := <-ready:
		return i
	case err := <-done:
		t.Fatalf("Up failed: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("Up not ready within 60 s")
	}
	return app.Info{}
}

// next reads the client's frames until one matches, and fails after 20 s
// or when the socket ends.
func next(t *testing.T, c *wsclient.Client, what string, match func(contracts.ServerFrame) bool) contracts.ServerFrame {
	t.Helper()
	deadline := time.After(20 * time.Second)
	frames := c.Frames()
	for {
		select {
		case f, ok := <-frames:
			if !ok {
				t.Fatalf("the socket ended while waiting for %s", what)
			}
			if match(f) {
				return f
			}
		case <-deadline:
			t.Fatalf("no %s within 20 s", what)
		}
	}
}

func ackOf(id string) func(contracts.ServerFrame) bool {
	return func(f contracts.ServerFrame) bool {
		return f.Type == contracts.FrameAck && f.Ack != nil && f.Ack.ID == id
	}
}

func endOf(turn string) func(contracts.ServerFrame) bool {
	return func(f contracts.ServerFrame) bool {
		if f.TurnID != turn {
			return false
		}
		switch f.Type {
		case contracts.FrameAnswer, contracts.FrameClarify, contracts.FrameProposal, contracts.FrameError:
			return true
		}
		return false
	}
}

// The client against purser's own ingress: a frame written while no
// socket was open waits and is sent on the next one with its id; the ack
// ends the wait; the seq of what arrives is kept, so another socket
// resumes and gets the same frames; a frame sent again with its id is the
// same turn; a ping gets a pong; a refused token is refused for good.
func TestClientAgainstPurser(t *testing.T) {
	info := startPurser(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msg := contracts.MessageFrame{ID: "m1", ConversationID: "c1", Text: "what did I spend this month?", Timezone: "UTC"}

	c := wsclient.New(wsclient.Config{URL: info.WebsocketURL(), Token: info.DemoToken})
	defer c.Close()
	if err := c.SendMessage(ctx, msg); !errors.Is(err, wsclient.ErrNotConnected) {
		t.Fatalf("send before connecting = %v, want ErrNotConnected", err)
	}
	if got := c.Unacked(); got != 1 || !c.Pending("m1") {
		t.Fatalf("unacked after a failed write = %d (m1 pending %v), want the frame kept", got, c.Pending("m1"))
	}
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.ResendUnacked(ctx); err != nil {
		t.Fatal(err)
	}
	ack := next(t, c, "the ack of m1", ackOf("m1"))
	if got := c.Unacked(); got != 0 {
		t.Fatalf("unacked after the ack = %d, want 0", got)
	}
	end := next(t, c, "the end of m1's turn", endOf(ack.TurnID))
	if end.Seq == 0 || c.LastSeq() < end.Seq {
		t.Fatalf("last seq %d after a frame of seq %d", c.LastSeq(), end.Seq)
	}

	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	next(t, c, "a pong", func(f contracts.ServerFrame) bool { return f.Type == contracts.FramePong })

	// The same id again is the same turn, answered with its outcome.
	if err := c.SendMessage(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if again := next(t, c, "the ack of m1 sent again", ackOf("m1")); again.TurnID != ack.TurnID {
		t.Fatalf("m1 sent again is turn %s, want %s", again.TurnID, ack.TurnID)
	}
	if replay := next(t, c, "m1's outcome again", endOf(ack.TurnID)); replay.Seq != end.Seq || replay.Type != end.Type {
		t.Fatalf("m1's outcome again: %s seq %d, want %s seq %d", replay.Type, replay.Seq, end.Type, end.Seq)
	}

	// A new socket that resumes after nothing gets the turn's frames.
	other := wsclient.New(wsclient.Config{URL: info.WebsocketURL(), Token: info.DemoToken})
	defer other.Close()
	if err := other.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := other.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if got := next(t, other, "m1's outcome on resume", endOf(ack.TurnID)); got.Seq != end.Seq {
		t.Fatalf("resumed %s seq %d, want seq %d", got.Type, got.Seq, end.Seq)
	}
	if other.LastSeq() < end.Seq {
		t.Fatalf("last seq %d after a resume that replayed seq %d", other.LastSeq(), end.Seq)
	}

	refused := wsclient.New(wsclient.Config{URL: info.WebsocketURL(), Token: "not-a-token"})
	if err := refused.Connect(ctx); !errors.Is(err, wsclient.ErrRefused) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("connect with a bad token = %v, want ErrRefused (401)", err)
	}
}

// Connect offers purser's subprotocol and the token as a bearer header,
// and only a refusal that another attempt would meet again is ErrRefused.
func TestConnect(t *testing.T) {
	tests := []struct {
		name        string
		give        int // the server's status; 0 upgrades
		wantRefused bool
	}{
		{"upgraded", 0, false},
		{"unauthorized", http.StatusUnauthorized, true},
		{"forbidden", http.StatusForbidden, true},
		{"too many sockets", http.StatusTooManyRequests, false},
		{"unavailable", http.StatusServiceUnavailable, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			headers := make(chan http.Header, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				headers <- r.Header.Clone()
				if tt.give != 0 {
					http.Error(w, "no", tt.give)
					return
				}
				conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{auth.Subprotocol}})
				if err != nil {
					return
				}
				conn.CloseNow()
			}))
			defer srv.Close()
			c := wsclient.New(wsclient.Config{URL: "ws" + strings.TrimPrefix(srv.URL, "http"), Token: "tok"})
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			err := c.Connect(ctx)
			if got := errors.Is(err, wsclient.ErrRefused); got != tt.wantRefused || (tt.give == 0) != (err == nil) {
				t.Fatalf("Connect = %v (refused %v), want refused %v", err, got, tt.wantRefused)
			}
			h := <-headers
			if got, want := h.Get("Authorization"), "Bearer tok"; got != want {
				t.Errorf("Authorization = %q, want %q", got, want)
			}
			if got := h.Get("Sec-WebSocket-Protocol"); got != auth.Subprotocol {
				t.Errorf("offered subprotocols %q, want %q", got, auth.Subprotocol)
			}
		})
	}
}
