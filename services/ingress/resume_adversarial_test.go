package ingress_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Rule: resume, the live-frame boundary. A live copy of a frame that a
// resume replayed reaches the socket at most once, whether it arrived
// while the socket held live frames back (before the resume) or after the
// replay: a late copy is dropped, and the frames after it come in order.
func TestResumeDropsLiveCopiesOfReplayedFrames(t *testing.T) {
	h := newHarness(t)
	tok := h.token("acme", "ann")
	watcher := h.dial(tok) // a second device, live all along
	for range 3 {
		h.answer("acme", "ann", "c1")
	}
	for i := range 3 {
		if f := watcher.next(contracts.FrameAnswer); f.Seq != int64(i+1) {
			t.Fatalf("frame %d has seq %d", i, f.Seq)
		}
	}
	subject, err := bus.DeliverSubject("acme", "ann")
	if err != nil {
		t.Fatal(err)
	}
	raw := func(f contracts.ServerFrame) {
		t.Helper()
		f.ConversationID, f.At = "c1", time.Now().UTC()
		b, _ := json.Marshal(f)
		if err := h.nc.Publish(subject, b); err != nil {
			t.Fatal(err)
		}
		if err := h.nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	copyOf3 := contracts.ServerFrame{Type: contracts.FrameAnswer, Seq: 3, TurnID: "t3", Answer: &contracts.Answer{TurnID: "t3", Content: "answer 3"}}
	probe := func(text string) {
		t.Helper()
		// A token has no seq and is never dropped: once the watcher has
		// it, every socket was handed the frames published before it.
		raw(contracts.ServerFrame{Type: contracts.FrameToken, TurnID: "probe", Token: &contracts.TokenBody{Text: text}})
		for {
			if f := watcher.read(); f.Type == contracts.FrameToken && f.Token.Text == text {
				return
			}
		}
	}

	// A new socket holds live frames until its first frame: a late copy
	// of seq 3 is held, then the resume replays seq 3.
	c := h.dialRaw(tok)
	raw(copyOf3)
	probe("held")
	c.send(`{"type":"resume","after_seq":2}`)
	var seqs []int64
	readUntil := func(seq int64) {
		t.Helper()
		for {
			f := c.read()
			if f.Seq == 0 {
				continue
			}
			seqs = append(seqs, f.Seq)
			if f.Seq >= seq {
				return
			}
		}
	}
	// The pong comes after the replay (frames are handled in order), so
	// seq 4 is published after the resume replayed up to 3.
	c.send(`{"type":"ping"}`)
	for f := c.read(); f.Type != contracts.FramePong; f = c.read() {
		if f.Seq != 0 {
			seqs = append(seqs, f.Seq)
		}
	}
	h.answer("acme", "ann", "c1") // seq 4
	readUntil(4)
	// After the replay, another late copy of seq 3 arrives live.
	raw(copyOf3)
	probe("live")
	h.answer("acme", "ann", "c1") // seq 5
	readUntil(5)
	if want := "[3 4 5]"; fmt.Sprint(seqs) != want {
		t.Fatalf("the resumed socket got seqs %v, want %s: each once, in order", seqs, want)
	}
}
