package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/wsclient"
	"github.com/purser-ai/purser/pkg/contracts"
)

func TestChatFindsTheLocalServer(t *testing.T) {
	for give, want := range map[string]string{
		"127.0.0.1:8080": "ws://127.0.0.1:8080/v1/ws",
		"127.0.0.1:9000": "ws://127.0.0.1:9000/v1/ws",
		"0.0.0.0:8181":   "ws://127.0.0.1:8181/v1/ws",
		":7000":          "ws://127.0.0.1:7000/v1/ws",
		"[::1]:8080":     "ws://[::1]:8080/v1/ws",
	} {
		if got := localWebsocketURL(give); got != want {
			t.Errorf("localWebsocketURL(%q) = %q, want %q", give, got, want)
		}
	}
}

// socketScript is a websocket server whose connections a test drives one
// by one.
type socketScript struct {
	t     *testing.T
	url   string
	conns chan *websocket.Conn
}

func newSocketScript(t *testing.T) *socketScript {
	s := &socketScript{t: t, conns: make(chan *websocket.Conn)}
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{auth.Subprotocol}})
		if err != nil {
			return
		}
		select {
		case s.conns <- c:
		case <-stop:
			c.CloseNow()
		}
	}))
	t.Cleanup(func() { close(stop); srv.Close() })
	s.url = "ws" + strings.TrimPrefix(srv.URL, "http")
	return s
}

// next waits for the client's next connection.
func (s *socketScript) next() *websocket.Conn {
	s.t.Helper()
	select {
	case c := <-s.conns:
		s.t.Cleanup(func() { c.CloseNow() })
		return c
	case <-time.After(20 * time.Second):
		s.t.Fatal("the client did not connect")
		return nil
	}
}

func readFrame(t *testing.T, c *websocket.Conn) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read the client's frame: %v", err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("the client sent %q: %v", data, err)
	}
	return f
}

func writeFrame(t *testing.T, c *websocket.Conn, f contracts.ServerFrame) {
	t.Helper()
	b, _ := json.Marshal(f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20 s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startChat runs the terminal client in conversation c1 against a
// scripted server: what is typed goes to typed, printed is what the person
// saw, and done gets chat's result once it ends.
func startChat(t *testing.T) (s *socketScript, typed *io.PipeWriter, printed func() string, done chan error) {
	s = newSocketScript(t)
	in, typed := io.Pipe()
	out := &lockedWriter{w: &strings.Builder{}}
	printed = func() string {
		out.mu.Lock()
		defer out.mu.Unlock()
		return out.w.(*strings.Builder).String()
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done = make(chan error, 1)
	go func() { done <- chat(ctx, chatClient(s.url, "tok"), in, out, "c1", "UTC") }()
	return s, typed, printed, done
}

// endInput ends what the person types and waits for chat to end without
// an error, which it does once nothing waits for an ack (why).
func endInput(t *testing.T, typed *io.PipeWriter, done chan error, why string) {
	t.Helper()
	typed.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("chat did not end, though %s", why)
	}
}

// The client's duty (docs/protocol.md, "The client's duty"): a frame that was not
// acked when the socket dropped is sent again on the next socket with the
// same id, after a resume from the last seq seen; a frame that was acked
// is not sent again.
func TestChatResendsAnUnackedFrameWithTheSameID(t *testing.T) {
	s, typed, printed, done := startChat(t)
	at := time.Now().UTC()

	first := s.next()
	fmt.Fprintln(typed, "hello")
	hello := readFrame(t, first)
	if hello["type"] != "message" || hello["text"] != "hello" || hello["id"] == "" {
		t.Fatalf("first frame = %v", hello)
	}
	writeFrame(t, first, contracts.ServerFrame{Type: contracts.FrameAck, ConversationID: "c1", TurnID: "t1", At: at, Ack: &contracts.AckBody{ID: hello["id"].(string)}})
	writeFrame(t, first, contracts.ServerFrame{Type: contracts.FrameAnswer, Seq: 3, ConversationID: "c1", TurnID: "t1", At: at, Answer: &contracts.Answer{TurnID: "t1", Content: "Hi."}})
	waitFor(t, "the answer printed", func() bool { return strings.Contains(printed(), "purser: Hi.") })

	// The second message is read and never acked: the socket drops.
	fmt.Fprintln(typed, "add tea £2")
	tea := readFrame(t, first)
	if tea["type"] != "message" || tea["text"] != "add tea £2" || tea["id"] == hello["id"] {
		t.Fatalf("second frame = %v", tea)
	}
	first.CloseNow()

	second := s.next()
	if resume := readFrame(t, second); resume["type"] != "resume" || resume["after_seq"] != float64(3) {
		t.Fatalf("first frame after the reconnect = %v, want a resume after seq 3", resume)
	}
	again := readFrame(t, second)
	if fmt.Sprint(again) != fmt.Sprint(tea) {
		t.Fatalf("resent frame = %v, want the unacked one with its id: %v", again, tea)
	}
	writeFrame(t, second, contracts.ServerFrame{Type: contracts.FrameAck, ConversationID: "c1", TurnID: "t2", At: at, Ack: &contracts.AckBody{ID: tea["id"].(string)}})
	// The input ends and every frame is acked: the client closes without
	// writing anything more (the acked "hello" is not resent).
	endInput(t, typed, done, "its input ended and all was acked")
	rctx, rcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer rcancel()
	if _, data, err := second.Read(rctx); err == nil {
		t.Fatalf("the client wrote %s after everything was acked", data)
	}
	if !strings.Contains(printed(), "connection lost; reconnecting") {
		t.Errorf("the person was not told of the reconnect:\n%s", printed())
	}
}

// A decision carries an id too, so that a resent yes is one decision.
func TestChatDecisionCarriesAnID(t *testing.T) {
	s := newSocketScript(t)
	in, typed := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	out := &lockedWriter{w: &strings.Builder{}}
	go func() { done <- chat(ctx, chatClient(s.url, "tok"), in, out, "c1", "UTC") }()
	c := s.next()
	at := time.Now().UTC()
	writeFrame(t, c, contracts.ServerFrame{Type: contracts.FrameProposal, Seq: 1, ConversationID: "c1", TurnID: "t1", At: at,
		Proposal: &contracts.Proposal{ProposalID: "p1", TurnID: "t1", Tool: "add_expense", Args: json.RawMessage(`{}`), Summary: "Add tea?", ExpiresAt: at.Add(time.Hour)}})
	waitFor(t, "the proposal printed", func() bool {
		out.mu.Lock()
		defer out.mu.Unlock()
		return strings.Contains(out.w.(*strings.Builder).String(), "purser proposes: Add tea?")
	})
	fmt.Fprintln(typed, "yes")
	f := readFrame(t, c)
	if f["type"] != "confirm" || f["proposal_id"] != "p1" || f["decision"] != "approve" || f["id"] == nil || f["id"] == "" {
		t.Fatalf("decision frame = %v", f)
	}
	writeFrame(t, c, contracts.ServerFrame{Type: contracts.FrameAck, At: at, Ack: &contracts.AckBody{ID: f["id"].(string)}})
	typed.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A server that refuses the token is not dialled again and again.
func TestChatStopsWhenTheTokenIsRefused(t *testing.T) {
	s := newSocketScript(t)
	err := chat(context.Background(), chatClient(s.url, "not-the-token"), strings.NewReader("hi\n"), io.Discard, "c1", "UTC")
	if !errors.Is(err, wsclient.ErrRefused) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("chat with a refused token = %v", err)
	}
}

// A frame the server could not queue ("unavailable": the bus or the
// notifier did not answer, and the turn may have been queued after all)
// is sent again with the same id after a back-off, so it becomes one turn;
// only when it keeps failing is the person told, and the frame given up.
func TestChatSendsAgainWhatCouldNotBeQueued(t *testing.T) {
	defer func(b time.Duration) { notQueuedBackoff = b }(notQueuedBackoff)
	notQueuedBackoff = 10 * time.Millisecond
	s, typed, printed, done := startChat(t)
	at := time.Now().UTC()
	c := s.next()
	notQueued := func(id string) {
		writeFrame(t, c, contracts.ServerFrame{Type: contracts.FrameError, ConversationID: "c1", At: at,
			Error: &contracts.ErrorBody{ID: id, Code: contracts.ErrCodeUnavailable, Message: "the message could not be queued; please retry"}})
	}

	fmt.Fprintln(typed, "hello")
	hello := readFrame(t, c)
	id, _ := hello["id"].(string)
	for try := 1; try <= 2; try++ {
		notQueued(id)
		if again := readFrame(t, c); fmt.Sprint(again) != fmt.Sprint(hello) {
			t.Fatalf("after unavailable answer %d the client sent %v, want the same frame again: %v", try, again, hello)
		}
	}
	writeFrame(t, c, contracts.ServerFrame{Type: contracts.FrameAck, ConversationID: "c1", TurnID: "t1", At: at, Ack: &contracts.AckBody{ID: id}})
	writeFrame(t, c, contracts.ServerFrame{Type: contracts.FrameAnswer, Seq: 1, ConversationID: "c1", TurnID: "t1", At: at, Answer: &contracts.Answer{TurnID: "t1", Content: "Hi."}})
	waitFor(t, "the answer printed", func() bool { return strings.Contains(printed(), "purser: Hi.") })
	if p := printed(); !strings.Contains(p, "not queued yet; sending it again") || strings.Contains(p, "error:") {
		t.Fatalf("while the frame was being sent again the person saw:\n%s", p)
	}

	// A frame the server never manages to queue is given up after
	// notQueuedTries answers, and the person sees the error.
	fmt.Fprintln(typed, "add tea £2")
	tea := readFrame(t, c)
	for try := 1; ; try++ {
		notQueued(tea["id"].(string))
		if try == notQueuedTries {
			break
		}
		if again := readFrame(t, c); fmt.Sprint(again) != fmt.Sprint(tea) {
			t.Fatalf("after unavailable answer %d the client sent %v, want %v", try, again, tea)
		}
	}
	waitFor(t, "the error printed", func() bool { return strings.Contains(printed(), "error: the message could not be queued") })
	endInput(t, typed, done, "the frame given up no longer waits for an ack")
}

// A terminal chat's default conversation is a valid id no one can guess,
// new each time.
func TestCLIConversationIsNewEachTime(t *testing.T) {
	a, b := newCLIConversation(), newCLIConversation()
	if !contracts.ValidID(a) || len(a) != len("cli-")+16 || !strings.HasPrefix(a, "cli-") {
		t.Fatalf("newCLIConversation() = %q, want cli- and 16 hex digits", a)
	}
	if a == b {
		t.Fatalf("two chats got the same conversation %q", a)
	}
}
