package ingress_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
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
			if err := h.nc.Publish(subject, b); err != nil {
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
