package ingress_test

import (
	"fmt"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// A client that drops mid-conversation and resumes gets every frame it
// missed, then the live ones, in order and each exactly once, even while
// new frames keep arriving during the catch-up (which spans several pages).
func TestResumeDeliversEveryMissedFrameOnce(t *testing.T) {
	h := newHarness(t)
	tok := h.token("acme", "ann")
	c := h.dial(tok)
	const seen, missed, live = 3, 450, 60
	for range seen {
		h.answer("acme", "ann", "c1")
	}
	var last int64
	for i := range seen {
		f := c.next(contracts.FrameAnswer)
		if f.Seq != int64(i+1) {
			t.Fatalf("frame %d has seq %d", i, f.Seq)
		}
		last = f.Seq
	}
	c.conn.CloseNow()

	// Offline: the notifier stores what the client misses.
	want := map[int64]string{}
	for i := range missed {
		want[int64(seen+i+1)] = h.answer("acme", "ann", "c1")
	}
	// Notify frames share the user's seq; one in the middle of the replay.
	eventually(t, "missed frames stored", func() bool {
		return h.metric("purser_notifier_frames_total", "type", "answer") >= seen+missed
	})

	// Back online: resume first thing, while live frames keep coming.
	c = h.dialRaw(tok)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range live {
			h.answer("acme", "ann", "c1")
		}
	}()
	c.send(fmt.Sprintf(`{"type":"resume","after_seq":%d}`, last))
	total := int64(seen + missed + live)
	for last < total {
		f := c.read()
		if f.Type == contracts.FrameToken {
			continue
		}
		if f.Type != contracts.FrameAnswer {
			t.Fatalf("after seq %d got %+v", last, f)
		}
		if f.Seq != last+1 {
			t.Fatalf("got seq %d after %d: frames must come in order, each once", f.Seq, last)
		}
		if text, ok := want[f.Seq]; ok && f.Answer.Content != text {
			t.Fatalf("seq %d content %q, want %q", f.Seq, f.Answer.Content, text)
		}
		last = f.Seq
	}
	<-done
	// Nothing more: the next frame is the pong.
	c.send(`{"type":"ping"}`)
	if f := c.read(); f.Type != contracts.FramePong {
		t.Fatalf("after the last frame got %+v", f)
	}
	if got := h.metric("purser_ingress_replayed_frames_total"); got < missed {
		t.Errorf("replayed = %v, want at least %d", got, missed)
	}
}

// Resume with nothing missed replays nothing, and a resume from 0 replays
// everything the user ever got (tokens excepted).
func TestResumeFromZeroAndFromTheEnd(t *testing.T) {
	h := newHarness(t)
	tok := h.token("acme", "ann")
	c := h.dial(tok)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	ans := c.next(contracts.FrameAnswer)
	h.notify("acme", "ann", "n1", "Imported 3 transactions")
	note := c.next(contracts.FrameNotification)

	c.send(fmt.Sprintf(`{"type":"resume","after_seq":%d}`, note.Seq))
	c.send(`{"type":"ping"}`)
	if f := c.read(); f.Type != contracts.FramePong {
		t.Fatalf("resume at the end replayed %+v", f)
	}
	c.send(`{"type":"resume","after_seq":0}`)
	if f := c.read(); f.Type != contracts.FrameUserMessage || f.Seq != ans.Seq-1 || f.UserMessage.Text != "hello" || f.UserMessage.ID != "m1" {
		t.Fatalf("replayed the user's own message as %+v", f)
	}
	if f := c.read(); f.Type != contracts.FrameAnswer || f.Seq != ans.Seq || f.Answer.Content != "All good." {
		t.Fatalf("replayed first %+v", f)
	}
	if f := c.read(); f.Type != contracts.FrameNotification || f.Seq != note.Seq || f.Notification.ID != "n1" {
		t.Fatalf("replayed second %+v", f)
	}
}
