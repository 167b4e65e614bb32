package ingress_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/wsclient"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/ingress"
)

// replica starts another ingress on the harness's NATS server, as a
// second pod would run, and returns its websocket URL.
func (h *harness) replica() string {
	h.t.Helper()
	verifier, err := auth.NewVerifier(auth.Config{Secret: testSecret, Issuer: issuer, Audience: audience})
	if err != nil {
		h.t.Fatal(err)
	}
	nc := natstest.Connect(h.t, h.ns, "ingress-2")
	js, err := jetstream.New(nc)
	if err != nil {
		h.t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	in := ingress.New(ingress.Config{PingInterval: time.Hour}, verifier, nc, bus.NewPublisher(nc, js),
		ingress.NewMetrics(prometheus.NewRegistry()), log, time.Now)
	mux := http.NewServeMux()
	in.Routes(mux)
	srv := httptest.NewServer(mux)
	h.t.Cleanup(func() { in.Close(); srv.Close() })
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/v1/ws"
}

// An ingress that stops closes its sockets with 1012; the client
// reconnects (its load balancer now sends it to the other replica),
// resumes, and gets the answer to the turn it sent before the close,
// which came while it had no socket at all. Nothing is sent twice.
func TestStoppingIngressSendsClientsToAnotherReplica(t *testing.T) {
	h := newHarness(t)
	second := h.replica()
	var target atomic.Value // where the "load balancer" sends a new socket
	target.Store(h.wsURL())
	c := wsclient.New(wsclient.Config{URL: "ws://balancer/v1/ws", Token: h.token("acme", "ann"),
		Dial: func(ctx context.Context, _ string, opts *websocket.DialOptions) (*websocket.Conn, *http.Response, error) {
			return websocket.Dial(ctx, target.Load().(string), opts)
		}})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	frames := c.Frames()
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.SendMessage(ctx, contracts.MessageFrame{ID: "m1", ConversationID: "c1", Text: "silent until the restart"}); err != nil {
		t.Fatal(err)
	}
	var turnID string
	for f := range frames {
		if f.Type == contracts.FrameAck && f.Ack != nil && f.Ack.ID == "m1" {
			turnID = f.TurnID
			break
		}
	}
	if turnID == "" {
		t.Fatal("the socket ended before the message was acked")
	}
	var turn contracts.UserTurn
	select {
	case turn = <-h.turns:
	case <-time.After(20 * time.Second):
		t.Fatal("the turn never reached the orchestrator")
	}

	// The replica stops: new sockets go to the other one.
	target.Store(second)
	h.mu.Lock()
	in := h.in
	h.mu.Unlock()
	in.Shutdown(ctx)
	for range frames { // the socket ends
	}
	if got := c.CloseStatus(); got != wsclient.StatusServiceRestart {
		t.Fatalf("socket closed with %v, want 1012 (service restart)", got)
	}
	// The answer comes while the client has no socket.
	h.agent(bus.NewPublisher(h.nc, h.js), turn, contracts.TypeAnswer, contracts.Answer{TurnID: turn.TurnID, Content: "Answered during the restart."})

	if err := c.Connect(ctx); err != nil {
		t.Fatalf("reconnect to the other replica: %v", err)
	}
	if err := c.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	answers := 0
	deadline := time.After(20 * time.Second)
	for answers == 0 {
		select {
		case f, ok := <-c.Frames():
			if !ok {
				t.Fatal("the new socket ended")
			}
			if f.Type == contracts.FrameAnswer && f.TurnID == turnID {
				answers++
				if f.Answer == nil || f.Answer.Content != "Answered during the restart." {
					t.Fatalf("answer %+v", f.Answer)
				}
			}
		case <-deadline:
			t.Fatal("no answer on the other replica within 20 s")
		}
	}
	if n := c.Unacked(); n != 0 {
		t.Errorf("%d frames still wait for an ack", n)
	}
	// Nothing else of the turn comes again: a ping's pong closes the
	// exchange with no second answer before it.
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	for f := range c.Frames() {
		if f.Type == contracts.FramePong {
			break
		}
		if f.Type == contracts.FrameAnswer {
			t.Fatalf("the answer came twice")
		}
	}
}

// A socket that opens on a stopping ingress is turned away with 1012 too.
func TestStoppingIngressTurnsNewSocketsAway(t *testing.T) {
	h := newHarness(t)
	h.mu.Lock()
	in := h.in
	h.mu.Unlock()
	in.Close()
	c := h.dialRaw(h.token("acme", "ann"))
	if got := c.closeStatus(); got != websocket.StatusServiceRestart {
		t.Fatalf("close status = %v, want 1012", got)
	}
}
