package ingress_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/ingress"
)

// badTokens are tokens the verifier must refuse, by the reason it counts.
func badTokens(t *testing.T) map[string]struct{ token, reason string } {
	t.Helper()
	mint := func(m *auth.Minter) string {
		tok, err := m.Mint("acme", "ann", []auth.Role{auth.RoleMember}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	enc := base64.RawURLEncoding.EncodeToString
	claims, _ := json.Marshal(map[string]any{"iss": issuer, "aud": audience, "sub": "ann", "tenant": "acme", "roles": []string{"member"},
		"exp": time.Now().Add(time.Hour).Unix()})
	return map[string]struct{ token, reason string }{
		"none":           {"", "missing"},
		"expired":        {mint(auth.NewMinter(testSecret, issuer, audience, func() time.Time { return time.Now().Add(-2 * time.Hour) })), "expired"},
		"bad signature":  {mint(auth.NewMinter([]byte("another-secret-another-secret-0123"), issuer, audience, nil)), "signature"},
		"alg none":       {enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + enc(claims) + ".", "algorithm"},
		"wrong audience": {mint(auth.NewMinter(testSecret, issuer, "someone-else", nil)), "claims"},
	}
}

func TestAuthRefusedBeforeUpgrade(t *testing.T) {
	h := newHarness(t)
	for name, tt := range badTokens(t) {
		h.forbid(tt.token)
		t.Run(name, func(t *testing.T) {
			before := h.metric("purser_ingress_auth_failures_total", "reason", tt.reason)
			hdr := http.Header{}
			if tt.token != "" {
				hdr.Set("Authorization", "Bearer "+tt.token)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn, resp, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{HTTPHeader: hdr, Subprotocols: []string{auth.Subprotocol}})
			if err == nil {
				conn.CloseNow()
				t.Fatal("upgrade succeeded")
			}
			if resp == nil || resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("response = %v, want 401", resp)
			}
			if got := h.metric("purser_ingress_auth_failures_total", "reason", tt.reason); got != before+1 {
				t.Errorf("auth failures{reason=%s} = %v, want %v", tt.reason, got, before+1)
			}
			// The same token is refused by the HTTP API too.
			for _, r := range []struct{ method, path string }{{"POST", "/v1/chat"}, {"GET", "/v1/notifications"}, {"POST", "/v1/notifications/n1/read"}} {
				req, _ := http.NewRequest(r.method, h.srv.URL+r.path, strings.NewReader(`{"message":"hi"}`))
				req.Header = hdr.Clone()
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				assertError(t, resp, http.StatusUnauthorized, "unauthorized")
			}
		})
	}
}

func TestForeignOriginRefused(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hdr := http.Header{"Authorization": {"Bearer " + h.token("acme", "ann")}, "Origin": {"https://evil.example"}}
	conn, resp, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{HTTPHeader: hdr})
	if err == nil {
		conn.CloseNow()
		t.Fatal("upgrade from a foreign origin succeeded")
	}
	if resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("response = %v, want 403", resp)
	}
	// The server's own origin is fine.
	hdr.Set("Origin", h.srv.URL)
	conn, _, err = websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatalf("same-origin dial: %v", err)
	}
	conn.CloseNow()
}

func TestFrameOverLimitCloses1009(t *testing.T) {
	h := newHarness(t)
	c := h.dial(h.token("acme", "ann"))
	c.send(`{"type":"message","id":"big","conversation_id":"c1","text":"` + strings.Repeat("x", 70<<10) + `"}`)
	if got := c.closeStatus(); got != websocket.StatusMessageTooBig {
		t.Fatalf("close status = %v, want 1009", got)
	}
}

func TestMessageIsAckedAndAnswered(t *testing.T) {
	h := newHarness(t)
	c := h.dial(h.token("acme", "ann"))
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	ack := c.next(contracts.FrameAck)
	if ack.Ack == nil || ack.Ack.ID != "m1" {
		t.Fatalf("ack = %+v", ack)
	}
	// The user's own message is the turn's first frame (seq 1), then its
	// answer.
	ans := c.next(contracts.FrameAnswer)
	if ans.Seq != 2 || ans.TurnID != ack.TurnID || ans.Answer.Content != "All good." {
		t.Fatalf("answer = %+v", ans)
	}
	// The socket counts a frame once its write returned, which may be
	// after the client read it.
	eventually(t, "the answer's delivery lag observed", func() bool { return h.metric("purser_ingress_delivery_lag_seconds") >= 1 })
	eventually(t, "the answer counted", func() bool { return h.metric("purser_ingress_frames_out_total", "type", "answer") == 1 })
}

// The chaos run found a user stuck for good: the notifier was quicker than
// the ingress, the turn's proposal reached the socket before its ack, and
// the client, which learns the turn id from the ack, never matched it.
func TestAckComesBeforeEveryFrameOfItsTurn(t *testing.T) {
	h := newHarness(t)
	h.onPublish(func(turn contracts.UserTurn, deliver func([]byte)) {
		// A frame of the turn arrives while the ack is not queued yet.
		b, _ := json.Marshal(contracts.ServerFrame{Type: contracts.FrameToken, ConversationID: turn.ConversationID, TurnID: turn.TurnID,
			At: time.Now().UTC(), Token: &contracts.TokenBody{Text: "early", Index: 0}})
		deliver(b)
	})
	c := h.dial(h.token("acme", "ann"))
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	var order []string
	for {
		f := c.read()
		if f.Type == contracts.FrameUserMessage {
			continue
		}
		order = append(order, f.Type)
		if f.Type == contracts.FrameAnswer {
			break
		}
	}
	if len(order) < 3 || order[0] != contracts.FrameAck || order[1] != contracts.FrameToken {
		t.Fatalf("frames in order %v: the ack must come first, then the early token", order)
	}
}

func TestSeveralTabsAllReceive(t *testing.T) {
	h := newHarness(t)
	tok := h.token("acme", "ann")
	tabs := []*wsClient{h.dial(tok), h.dial(tok), h.dial(tok)}
	other := h.dial(h.token("acme", "bob"))
	text := h.answer("acme", "ann", "c1")
	for i, tab := range tabs {
		f := tab.next(contracts.FrameAnswer)
		if f.Answer.Content != text || f.Seq != 1 {
			t.Errorf("tab %d got %+v", i, f)
		}
	}
	// Another user's socket got nothing: its next frame is the pong.
	other.send(`{"type":"ping"}`)
	if f := other.read(); f.Type != contracts.FramePong {
		t.Errorf("bob got %+v", f)
	}
	if got := h.metric("purser_ingress_connections"); got != 4 {
		t.Errorf("connections = %v, want 4", got)
	}
}

func TestSlowClientClosedOthersUnaffected(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.SendQueue = 4 })
	tok := h.token("acme", "ann")
	slow := h.dial(tok)
	fast := h.dial(tok)

	// Big token frames go straight to the deliver subject, one at a time:
	// the fast tab reads each before the next is sent, the slow one reads
	// nothing. Once the kernel's buffers towards the slow tab are full, its
	// queue of 4 fills and it is dropped; the fast tab never falls behind.
	subject, _ := bus.DeliverSubject("acme", "ann")
	piece := strings.Repeat("x", 64<<10)
	const maxFrames = 2000 // 128 MiB: far beyond any socket buffer
	dropped := func() bool { return h.metric("purser_ingress_send_queue_drops_total") > 0 }
	sent := 0
	for ; sent < maxFrames && !dropped(); sent++ {
		b, _ := json.Marshal(contracts.ServerFrame{Type: contracts.FrameToken, At: time.Now().UTC(), Token: &contracts.TokenBody{Text: piece, Index: sent}})
		if err := h.nc.Publish(subject, b); err != nil {
			t.Fatal(err)
		}
		if f := fast.read(); f.Type != contracts.FrameToken || f.Token.Index != sent {
			t.Fatalf("fast tab: frame %d = %s %+v", sent, f.Type, f.Token)
		}
	}
	if !dropped() {
		t.Fatalf("the slow tab was never dropped after %d frames", sent)
	}
	if got := h.metric("purser_ingress_send_queue_drops_total"); got != 1 {
		t.Errorf("send queue drops = %v, want 1 (only the slow tab)", got)
	}
	// The slow tab, reading at last, gets what was in flight and then 1008.
	if got := slow.closeStatus(); got != websocket.StatusPolicyViolation {
		t.Fatalf("slow tab close status = %v, want 1008", got)
	}
	// The fast tab still works.
	fast.send(`{"type":"ping"}`)
	fast.next(contracts.FramePong)
}

func TestRateLimitOnSocket(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.RatePerSecond = 0.001; c.Burst = 2 })
	c := h.dial(h.token("acme", "ann"))
	for i, id := range []string{"m1", "m2"} {
		c.send(`{"type":"message","id":"` + id + `","conversation_id":"c1","text":"silent"}`)
		if f := c.next(contracts.FrameAck); f.Ack.ID != id {
			t.Fatalf("message %d: %+v", i, f)
		}
	}
	c.send(`{"type":"message","id":"m3","conversation_id":"c1","text":"silent"}`)
	f := c.next(contracts.FrameError)
	if f.Error.Code != contracts.ErrCodeRateLimited || f.Error.ID != "m3" {
		t.Fatalf("third message: %+v", f.Error)
	}
	if got := h.metric("purser_ingress_rate_limited_total"); got != 1 {
		t.Errorf("rate limited = %v, want 1", got)
	}
	// The limit is per user: another user of the same tenant, and ann's
	// namesake in another tenant, still have their own budget.
	for _, who := range [][2]string{{"acme", "bob"}, {"other", "ann"}} {
		o := h.dial(h.token(who[0], who[1]))
		o.send(`{"type":"message","id":"o1","conversation_id":"c1","text":"silent"}`)
		if f := o.next(contracts.FrameAck); f.Ack == nil || f.Ack.ID != "o1" {
			t.Fatalf("%s/%s limited by ann's turns: %+v", who[0], who[1], f)
		}
	}
}

// A socket outlives neither its token nor a silence past the idle timeout.
func TestSocketClosesWhenTokenExpires(t *testing.T) {
	h := newHarness(t)
	tok, err := auth.NewMinter(testSecret, issuer, audience, nil).Mint("acme", "ann", []auth.Role{auth.RoleMember}, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	h.forbid(tok)
	c := h.dial(tok)
	if got := c.closeStatus(); got != ingress.StatusTokenExpired {
		t.Fatalf("close status = %v, want %d (token expired)", got, ingress.StatusTokenExpired)
	}
	eventually(t, "connection gauge back to 0", func() bool { return h.metric("purser_ingress_connections") == 0 })
}

func TestIdleSocketIsClosed(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.IdleTimeout = 300 * time.Millisecond })
	c := h.dial(h.token("acme", "ann"))
	if got := c.closeStatus(); got != websocket.StatusGoingAway {
		t.Fatalf("close status = %v, want 1001 (idle)", got)
	}
	eventually(t, "connection gauge back to 0", func() bool { return h.metric("purser_ingress_connections") == 0 })
}

// A client that stops answering pings is closed with 1001 "no pong",
// before its idle timeout.
func TestSocketWithoutPongsIsClosed(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.PingInterval = 200 * time.Millisecond; c.IdleTimeout = time.Hour })
	c := h.dial(h.token("acme", "ann"))
	// coder/websocket answers pings only while reading: not reading is
	// not answering.
	eventually(t, "the silent socket closed", func() bool { return h.metric("purser_ingress_connections") == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.conn.Read(ctx)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway || ce.Reason != "no pong" {
		t.Fatalf("close = %v, want 1001 no pong", err)
	}
}

// One user may hold MaxSocketsPerUser sockets; one more is refused before
// the upgrade with 429, another user is not affected, and closing one
// frees a place.
func TestSocketCapPerUser(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.MaxSocketsPerUser = 3 })
	ann := h.token("acme", "ann")
	var open []*wsClient
	for range 3 {
		open = append(open, h.dial(ann))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": []string{"Bearer " + ann}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("fourth socket: err %v, resp %v; want 429", err, resp)
	}
	h.dial(h.token("acme", "bob")) // bob has places of his own
	open[0].conn.Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, _, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": []string{"Bearer " + ann}}})
		if err == nil {
			conn.CloseNow()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no place after a socket closed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
