package ingress_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/ingress"
)

// An idle socket has no writer goroutine: frames that come after the
// writer stopped start it again, and arrive whole and in order, however
// large (the frame sizes straddle the 4 KiB write buffer and the
// websocket length encodings).
func TestFramesAfterWriterRestedArriveInOrder(t *testing.T) {
	h := newHarness(t)
	c := h.dial(h.token("acme", "ann"))
	subject, _ := bus.DeliverSubject("acme", "ann")
	sizes := []int{1, 125, 126, 4000, 4096, 4200, 65535, 65536, 200_000}
	index := 0
	for round := range 3 {
		eventually(t, "the writer goroutine stops once the queue is empty", func() bool { return h.in.WritersRunning() == 0 })
		first := index
		for _, n := range sizes {
			b, _ := json.Marshal(contracts.ServerFrame{Type: contracts.FrameToken, At: time.Now().UTC(),
				Token: &contracts.TokenBody{Text: strings.Repeat(string(rune('a'+index%26)), n), Index: index}})
			// On the ingress's own connection, which sent its
			// subscription to the user's frames before this: from another
			// connection, the server may take the first frames before
			// the subscription, and drop them (1 run in about 20 under
			// -race), as a live token is dropped in production.
			if err := h.inc.Publish(subject, b); err != nil {
				t.Fatal(err)
			}
			index++
		}
		for i, n := range sizes {
			f := c.read()
			want := strings.Repeat(string(rune('a'+(first+i)%26)), n)
			if f.Type != contracts.FrameToken || f.Token.Index != first+i || f.Token.Text != want {
				t.Fatalf("round %d: frame %d = %s index %v (%d bytes), want token %d of %d bytes", round, i, f.Type, f.Token.Index, len(f.Token.Text), first+i, n)
			}
		}
	}
}

// A client frame larger than the read buffer is read whole, and small
// frames sent in one burst are each answered.
func TestLargeClientFrame(t *testing.T) {
	h := newHarness(t)
	c := h.dial(h.token("acme", "ann"))
	text := strings.Repeat("€", 3900) // 11.7 KB, under the 4,000-character limit
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"` + text + `"}`)
	if ack := c.next(contracts.FrameAck); ack.Ack == nil || ack.Ack.ID != "m1" {
		t.Fatalf("ack = %+v", ack)
	}
	if ans := c.next(contracts.FrameAnswer); ans.Answer == nil {
		t.Fatalf("answer = %+v", ans)
	}
	for range 50 {
		c.send(`{"type":"ping"}`)
	}
	for range 50 {
		c.next(contracts.FramePong)
	}
}

// Pings both ways leave the socket working: after each pong or ping the
// server's reader goes back to waiting, the frame it makes up to get
// there never reaches the client (an error would come before the pong),
// and the client's frames are answered as before.
func TestPingsBothWaysKeepTheSocketWorking(t *testing.T) {
	h := newHarness(t, func(c *ingress.Config) { c.PingInterval = 20 * time.Millisecond; c.IdleTimeout = time.Hour })
	var pings atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, h.wsURL(), &websocket.DialOptions{
		HTTPHeader:     http.Header{"Authorization": []string{"Bearer " + h.token("acme", "ann")}},
		Subprotocols:   []string{auth.Subprotocol},
		OnPingReceived: func(context.Context, []byte) bool { pings.Add(1); return true },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	// The client reads all along, which is what answers the server's pings.
	frames := make(chan contracts.ServerFrame, 100)
	go func() {
		defer close(frames)
		for {
			_, data, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			var f contracts.ServerFrame
			if json.Unmarshal(data, &f) == nil {
				frames <- f
			}
		}
	}()
	pong := func(round int) {
		t.Helper()
		wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer wcancel()
		if err := conn.Write(wctx, websocket.MessageText, []byte(`{"type":"ping"}`)); err != nil {
			t.Fatalf("round %d: write: %v", round, err)
		}
		select {
		case f, ok := <-frames:
			if !ok || f.Type != contracts.FramePong {
				t.Fatalf("round %d: got %+v (open %v), want a pong", round, f, ok)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: no pong", round)
		}
	}
	for round := range 5 {
		// The server pings (its pong read by the server), the client pings
		// (the server answers it), then a frame of the client's.
		seen := pings.Load()
		eventually(t, "the server pings again", func() bool { return pings.Load() > seen })
		pctx, pcancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := conn.Ping(pctx); err != nil {
			t.Fatalf("round %d: client ping: %v", round, err)
		}
		pcancel()
		pong(round)
	}
}
