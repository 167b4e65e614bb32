package ingress_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
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

// storeUnpublished stores an answer frame for the user the way the
// notifier does, without publishing it: a notifier that crashed between
// its commit and its publish, or a publish lost while the ingress's NATS
// connection was down.
func (h *harness) storeUnpublished(tenant, user, conv, text string) int64 {
	h.t.Helper()
	h.seq++
	f := contracts.ServerFrame{Type: contracts.FrameAnswer, ConversationID: conv, TurnID: fmt.Sprintf("t%d", h.seq), At: time.Now().UTC(),
		Answer: &contracts.Answer{TurnID: fmt.Sprintf("t%d", h.seq), Content: text}}
	b, _ := json.Marshal(f)
	seq, _, err := h.store.AppendConversationFrame(context.Background(), tenant, user, conv, fmt.Sprintf("ev-t%d", h.seq), b, f.At)
	if err != nil {
		h.t.Fatal(err)
	}
	return seq
}

// A frame stored but not yet published (its notifier died in between)
// must still reach the socket, and before the frames after it: a live
// frame past a gap makes the ingress fetch the missing ones first. A
// client that resumes from the highest seq it saw would otherwise never
// get it.
func TestAGapInLiveFramesIsFilledFromTheStore(t *testing.T) {
	h := newHarness(t)
	c := h.dial(h.token("acme", "ann"))
	h.answer("acme", "ann", "c1")
	if f := c.next(contracts.FrameAnswer); f.Seq != 1 {
		t.Fatalf("first frame seq %d", f.Seq)
	}
	lost := h.storeUnpublished("acme", "ann", "c1", "the answer whose publish was lost")
	after := h.answer("acme", "ann", "c1")
	for i, want := range []string{"the answer whose publish was lost", after} {
		f := c.next(contracts.FrameAnswer)
		if f.Seq != lost+int64(i) || f.Answer.Content != want {
			t.Fatalf("frame %d: seq %d %q, want seq %d %q", i, f.Seq, f.Answer.Content, lost+int64(i), want)
		}
	}
	if got := h.metric("purser_ingress_gap_fills_total"); got != 1 {
		t.Errorf("gap fills = %v, want 1", got)
	}
}

// Frames published while the ingress's NATS connection was down are lost
// to core NATS; once it is back, every socket catches up from the store
// without waiting for a later frame to show the gap.
func TestReconnectedIngressCatchesSocketsUp(t *testing.T) {
	h := newHarness(t)
	c := h.dial(h.token("acme", "ann"))
	h.answer("acme", "ann", "c1")
	c.next(contracts.FrameAnswer)
	lost := h.storeUnpublished("acme", "ann", "c1", "published while the ingress was away")
	id, err := h.inc.GetClientID()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ns.DisconnectClientByID(id); err != nil {
		t.Fatal(err)
	}
	f := c.next(contracts.FrameAnswer)
	if f.Seq != lost || f.Answer.Content != "published while the ingress was away" {
		t.Fatalf("after the reconnect got seq %d %q, want seq %d", f.Seq, f.Answer.Content, lost)
	}
}

// stopResponder stops the notifier answering requests; startResponder
// brings it back.
func (h *harness) stopResponder() {
	h.respMu.Lock()
	defer h.respMu.Unlock()
	h.resp.Close()
	h.resp = nil
}

func (h *harness) startResponder() {
	h.respMu.Lock()
	defer h.respMu.Unlock()
	resp, err := h.notifier.Respond(h.nnc)
	if err != nil {
		h.t.Fatal(err)
	}
	h.resp = resp
}

// A resume the notifier cannot answer (it is restarting) is tried again by
// the ingress until it can: the client sent its resume once and gets what
// it missed, in order, without having to notice the failure.
func TestResumeWithoutTheNotifierCompletesWhenItReturns(t *testing.T) {
	h := newHarness(t)
	tok := h.token("acme", "ann")
	c := h.dial(tok)
	h.answer("acme", "ann", "c1")
	c.next(contracts.FrameAnswer)
	c.conn.CloseNow()
	missed := []string{h.answer("acme", "ann", "c1"), h.answer("acme", "ann", "c1")}
	eventually(t, "missed frames stored", func() bool {
		return h.metric("purser_notifier_frames_total", "type", "answer") >= 3
	})
	h.stopResponder()
	c = h.dialRaw(tok)
	c.send(`{"type":"resume","after_seq":1}`)
	eventually(t, "the resume refused for want of a notifier", func() bool {
		return h.metric("purser_ingress_notifier_requests_total", "op", "resume", "outcome", "unavailable") >= 1
	})
	h.startResponder()
	for i, want := range missed {
		f := c.next(contracts.FrameAnswer)
		if f.Seq != int64(i+2) || f.Answer.Content != want {
			t.Fatalf("after the notifier came back: seq %d %q, want seq %d %q", f.Seq, f.Answer.Content, i+2, want)
		}
	}
}

// A frame sent again with its id is answered with what its turn produced,
// even on a socket that resumed past those frames (or caught up after a
// gap): the client asked again because it did not take them, and a seq
// check must not swallow the answer it waits for.
func TestRepeatedFrameGetsItsAnswerAfterAResumePastIt(t *testing.T) {
	h := newHarness(t)
	tok := h.token("acme", "ann")
	c := h.dial(tok)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	c.next(contracts.FrameAck)
	ans := c.next(contracts.FrameAnswer)
	c.conn.CloseNow()

	c = h.dialRaw(tok)
	c.send(fmt.Sprintf(`{"type":"resume","after_seq":%d}`, ans.Seq))
	c.send(`{"type":"ping"}`)
	c.next(contracts.FramePong)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	if ack := c.next(contracts.FrameAck); ack.TurnID != ans.TurnID {
		t.Fatalf("the repeated frame is turn %s, want %s", ack.TurnID, ans.TurnID)
	}
	again := c.next(contracts.FrameAnswer)
	if again.Seq != ans.Seq || again.Answer.Content != ans.Answer.Content {
		t.Fatalf("answered again with %+v, want seq %d", again, ans.Seq)
	}
}

// A NATS restart rebuilds JetStream's duplicate window from the messages it
// still holds, and a work-queue stream holds none of the turns already
// consumed: a client resending such a turn (its ack was lost in the
// restart) got an ack as for a new turn, the orchestrator skipped the turn
// as done, and nothing answered. The chaos run in NATS-restart mode left
// users stuck this way. The ingress knows the turn by its stored message
// (or, for a decision, its stored outcome) and sends that outcome.
func TestTurnSentAgainAfterJetStreamForgotItGetsItsOutcome(t *testing.T) {
	h := newHarness(t)
	h.mu.Lock()
	h.once = true
	h.mu.Unlock()
	c := h.dial(h.token("acme", "ann"))
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"propose coffee"}`)
	prop := c.next(contracts.FrameProposal)
	confirm := fmt.Sprintf(`{"type":"confirm","id":"k1","conversation_id":"c1","proposal_id":%q,"decision":"approve"}`, prop.Proposal.ProposalID)
	c.send(confirm)
	ans := c.next(contracts.FrameAnswer)

	h.forgetDuplicates()
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"propose coffee"}`)
	if again := c.next(contracts.FrameProposal); again.Seq != prop.Seq || again.Proposal.ProposalID != prop.Proposal.ProposalID {
		t.Fatalf("message sent again: got seq %d %+v, want its proposal (seq %d) again", again.Seq, again.Proposal, prop.Seq)
	}
	c.send(confirm)
	if again := c.next(contracts.FrameAnswer); again.Seq != ans.Seq || again.Answer.Content != ans.Answer.Content {
		t.Fatalf("decision sent again: got seq %d %q, want its answer (seq %d) again", again.Seq, again.Answer.Content, ans.Seq)
	}
}

// forgetDuplicates makes JetStream forget the turns published so far, as
// a restart does for a work-queue stream whose turns were consumed: TURNS
// is deleted and made again (its duplicate window goes with it; nothing in
// this harness consumes it).
func (h *harness) forgetDuplicates() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.js.DeleteStream(ctx, bus.StreamTurns); err != nil {
		h.t.Fatal(err)
	}
	if err := bus.Provision(ctx, h.js, bus.NotifierConsumers()...); err != nil {
		h.t.Fatal(err)
	}
}

// A turn is published only once the notifier has said whether it was sent
// before. While it cannot say (restarting), the client is told to retry
// and nothing runs; its retry, once the notifier is back, runs the turn.
func TestTurnWaitsUntilTheNotifierCanSayItIsNew(t *testing.T) {
	h := newHarness(t)
	c := h.dial(h.token("acme", "ann"))
	h.stopResponder()
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	f := c.next(contracts.FrameError)
	if f.Error == nil || f.Error.ID != "m1" || f.Error.Code != contracts.ErrCodeUnavailable {
		t.Fatalf("without a notifier got %+v, want an unavailable error for m1", f.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := h.js.Stream(ctx, bus.StreamTurns)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := st.Info(ctx); err != nil || info.State.Msgs != 0 {
		t.Fatalf("TURNS holds %d messages (err %v): the turn was published while the notifier could not say whether it was new", info.State.Msgs, err)
	}
	h.startResponder()
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	c.next(contracts.FrameAck)
	if ans := c.next(contracts.FrameAnswer); ans.Answer.Content != "All good." {
		t.Fatalf("after the notifier came back: %+v", ans.Answer)
	}
}

// CI found an edit's refusal reaching a socket twice: for a decision sent
// without an id, the ingress asked after publishing whether it had an
// outcome, and a quick orchestrator had stored it by then, so it came both
// live and "again". Whether a decision was made before is asked before it
// is published; here its outcome is stored before the publish returns.
func TestQuickDecisionReachesTheSocketOnce(t *testing.T) {
	h := newHarness(t)
	c := h.dial(h.token("acme", "ann"))
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"propose coffee"}`)
	prop := c.next(contracts.FrameProposal)
	h.onPublish(func(turn contracts.UserTurn, _ func([]byte)) {
		if turn.Confirm == nil {
			return
		}
		eventually(t, "the decision's outcome stored", func() bool {
			frames, err := h.store.FramesOfTurn(context.Background(), turn.TenantID, turn.UserID, turn.TurnID, 10)
			return err == nil && len(frames) > 0
		})
	})
	c.send(fmt.Sprintf(`{"type":"confirm","conversation_id":"c1","proposal_id":%q,"decision":"approve"}`, prop.Proposal.ProposalID))
	ans := c.next(contracts.FrameAnswer)
	// A message after it: the next frame with a body is its answer, not
	// the decision's answer a second time.
	c.send(`{"type":"message","id":"m2","conversation_id":"c1","text":"hello"}`)
	for {
		f := c.read()
		if f.Type == contracts.FrameAnswer {
			if f.TurnID == ans.TurnID {
				t.Fatalf("the decision's answer reached the socket twice (seq %d, then seq %d)", ans.Seq, f.Seq)
			}
			break
		}
	}
}
