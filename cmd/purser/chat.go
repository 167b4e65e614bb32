package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/spf13/cobra"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
)

// chatCmd is a small terminal client for the websocket protocol: type a
// message, answer a proposal with yes or no.
func chatCmd(cfg *config.Config, stdout io.Writer) *cobra.Command {
	var url, token, conversation, tz string
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Chat with a running purser from the terminal (yes/no answers a proposal)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if token == "" {
				token = os.Getenv("PURSER_TOKEN")
			}
			if token == "" {
				secret, err := app.Secret(*cfg)
				if err != nil {
					return err
				}
				if token, err = auth.NewMinter(secret, cfg.JWTIssuer, cfg.JWTAudience, time.Now).Mint(app.DemoTenant, app.DemoUser, []auth.Role{auth.RoleOwner}, time.Hour); err != nil {
					return err
				}
			}
			if url == "" {
				url = localWebsocketURL(cfg.HTTPAddr)
			}
			return chat(ctx, dialer(url, token), os.Stdin, stdout, conversation, tz)
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "websocket URL (default: the local server at PURSER_HTTP_ADDR, ws://127.0.0.1:8080/v1/ws)")
	cmd.Flags().StringVar(&token, "token", "", "bearer token (default $PURSER_TOKEN, else one minted for the demo user)")
	cmd.Flags().StringVar(&conversation, "conversation", fmt.Sprintf("cli-%d", time.Now().Unix()), "conversation id")
	cmd.Flags().StringVar(&tz, "timezone", "UTC", "your IANA time zone")
	return cmd
}

// errRefused is a connection attempt the server answered with a status
// that another attempt would not change (a refused token, say).
var errRefused = errors.New("refused")

// dialer opens sockets to url with token. A refusal by status (401, 403)
// wraps errRefused: reconnecting would be refused again.
func dialer(url, token string) func(ctx context.Context) (*websocket.Conn, error) {
	return func(ctx context.Context) (*websocket.Conn, error) {
		conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
			HTTPHeader:   http.Header{"Authorization": []string{"Bearer " + token}},
			Subprotocols: []string{auth.Subprotocol},
		})
		if err != nil {
			if resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
				return nil, fmt.Errorf("connect to %s: %w (%s)", url, errRefused, resp.Status)
			}
			return nil, fmt.Errorf("connect to %s: %w", url, err)
		}
		conn.SetReadLimit(-1) // the server bounds its own frames
		return conn, nil
	}
}

// chatSession is the client's side of the protocol across reconnects:
// the frames written but not yet acked (resent, with the same id, on the
// next socket) and the highest seq seen (the next socket resumes after it).
type chatSession struct {
	out          io.Writer
	conversation string
	tz           string

	mu      sync.Mutex
	unacked []sentFrame // in the order they were written
	lastSeq int64
	// acked is signalled when an ack (or an error naming an id) arrives.
	acked chan struct{}
	// proposals holds the ids of proposals offered, newest last.
	proposals chan string
	// due receives the ids of frames to send again: the server could not
	// queue them (contracts.ErrCodeUnavailable).
	due   chan string
	ended chan struct{}
}

// notQueuedBackoff is the first wait before a frame the server could not
// queue is sent again, doubled for each further try up to 8 s.
var notQueuedBackoff = time.Second

type sentFrame struct {
	id   string
	data []byte
	// tries counts the server's "unavailable" answers to this frame;
	// waiting is set while a resend of it is due.
	tries   int
	waiting bool
}

// notQueuedTries bounds how often a frame the server could not queue is
// sent again before the person is told it failed.
const notQueuedTries = 5

// errDisconnected ends one socket's life: the session reconnects.
var errDisconnected = errors.New("disconnected")

// chat runs the terminal client until in ends and every frame written was
// acked, or ctx ends. A dropped socket is dialled again, with back-off;
// the new socket resumes after the last seq seen and resends every frame
// that was not acked, with its id, so that the server counts it once.
func chat(ctx context.Context, dial func(context.Context) (*websocket.Conn, error), in io.Reader, out io.Writer, conversation, tz string) error {
	out = &lockedWriter{w: out} // the socket's reader prints too
	s := &chatSession{out: out, conversation: conversation, tz: tz, acked: make(chan struct{}, 1), proposals: make(chan string, 8),
		due: make(chan string), ended: make(chan struct{})}
	defer close(s.ended)
	lines := make(chan string)
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	go func() {
		// Owned by nobody: a blocked read of stdin cannot be interrupted.
		// It ends with the input or when the session stops taking lines.
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-readCtx.Done():
				return
			}
		}
	}()
	fmt.Fprint(out, "> ")
	backoff, connected := 100*time.Millisecond, false
	for {
		conn, err := dial(ctx)
		if err != nil {
			if !connected || errors.Is(err, errRefused) || ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(out, "\n(%v; retrying in %s)\n", err, backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		err = s.serve(ctx, conn, lines, connected)
		if !errors.Is(err, errDisconnected) {
			return err
		}
		connected = true
		fmt.Fprint(out, "\n(connection lost; reconnecting)\n")
	}
}

// serve runs one socket: after a reconnect it resumes and resends what was
// not acked, then writes each line as a frame. It returns nil once the
// input ended and every frame was acked, errDisconnected when the socket
// dropped.
func (s *chatSession) serve(ctx context.Context, conn *websocket.Conn, lines <-chan string, again bool) error {
	dead := make(chan struct{})
	go func() { defer close(dead); s.read(ctx, conn) }()
	defer func() { conn.CloseNow(); <-dead }()
	write := func(b []byte) error {
		if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errDisconnected
		}
		return nil
	}
	if again {
		s.mu.Lock()
		after, resend := s.lastSeq, append([]sentFrame(nil), s.unacked...)
		for i := range s.unacked {
			s.unacked[i].waiting = false // resent below
		}
		s.mu.Unlock()
		if after > 0 {
			b, _ := json.Marshal(contracts.ResumeFrame{Type: contracts.FrameResume, AfterSeq: after})
			if err := write(b); err != nil {
				return err
			}
		}
		for _, f := range resend {
			if err := write(f.data); err != nil {
				return err
			}
		}
	}
	for n := 1; ; n++ {
		if lines == nil && s.allAcked() {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-dead:
			return errDisconnected
		case <-s.acked:
		case id := <-s.due:
			if data := s.takeDue(id); data != nil {
				if err := write(data); err != nil {
					return err
				}
			}
		case text, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			text = strings.TrimSpace(text)
			if text == "" {
				fmt.Fprint(s.out, "> ")
				continue
			}
			f := s.frame(text, n)
			s.mu.Lock()
			s.unacked = append(s.unacked, f)
			s.mu.Unlock()
			if err := write(f.data); err != nil {
				return err
			}
		}
	}
}

// frame builds the frame for a typed line: a decision on the newest
// proposal for yes or no while one waits, a message otherwise. Each has
// an id of its own, which a resend keeps.
func (s *chatSession) frame(text string, n int) sentFrame {
	id := fmt.Sprintf("m%d-%d", time.Now().UnixNano(), n)
	var frame any = contracts.MessageFrame{Type: contracts.FrameMessage, ID: id, ConversationID: s.conversation, Text: text, Timezone: s.tz}
	if d := decision(text); d != "" {
		select {
		case p := <-s.proposals:
			frame = contracts.ConfirmFrame{Type: contracts.FrameConfirm, ID: id, ConversationID: s.conversation, ProposalID: p, Decision: d}
		default:
		}
	}
	b, _ := json.Marshal(frame)
	return sentFrame{id: id, data: b}
}

func (s *chatSession) allAcked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.unacked) == 0
}

// answered drops the frame id from the unacked ones.
func (s *chatSession) answered(id string) {
	s.mu.Lock()
	for i, f := range s.unacked {
		if f.id == id {
			s.unacked = append(s.unacked[:i:i], s.unacked[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	select {
	case s.acked <- struct{}{}:
	default:
	}
}

// notQueued handles the server's "unavailable" answer to frame id: it
// could not queue the frame (the bus or the notifier did not answer), and
// may even have queued it after all, so the frame is sent again, with the
// same id, after a back-off; after notQueuedTries answers the person is
// told. It reports whether the frame will be sent again.
func (s *chatSession) notQueued(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.unacked {
		f := &s.unacked[i]
		if f.id != id {
			continue
		}
		if f.tries++; f.tries >= notQueuedTries {
			return false
		}
		wait := min(notQueuedBackoff<<(f.tries-1), 8*time.Second)
		f.waiting = true
		fmt.Fprintf(s.out, "\n(not queued yet; sending it again in %s)\n", wait)
		time.AfterFunc(wait, func() {
			select {
			case s.due <- id:
			case <-s.ended:
			}
		})
		return true
	}
	return false
}

// takeDue returns the frame id to send again, or nil when it needs no
// resend any more (acked meanwhile, or resent by a reconnect).
func (s *chatSession) takeDue(id string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.unacked {
		if f := &s.unacked[i]; f.id == id && f.waiting {
			f.waiting = false
			return f.data
		}
	}
	return nil
}

// read prints the socket's frames until it fails.
func (s *chatSession) read(ctx context.Context, conn *websocket.Conn) {
	out := s.out
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return
		}
		var f contracts.ServerFrame
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		if f.Seq > 0 {
			s.mu.Lock()
			s.lastSeq = max(s.lastSeq, f.Seq)
			s.mu.Unlock()
		}
		switch {
		case f.Type == contracts.FrameAck && f.Ack != nil:
			s.answered(f.Ack.ID)
		case f.Type == contracts.FrameAnswer && f.Answer != nil:
			fmt.Fprintf(out, "\npurser: %s\n> ", f.Answer.Content)
		case f.Type == contracts.FrameClarify && f.Clarify != nil:
			fmt.Fprintf(out, "\npurser asks: %s\n> ", f.Clarify.Question)
		case f.Type == contracts.FrameProposal && f.Proposal != nil:
			fmt.Fprintf(out, "\npurser proposes: %s (yes/no)\n> ", f.Proposal.Summary)
			select {
			case s.proposals <- f.Proposal.ProposalID:
			default:
			}
		case f.Type == contracts.FrameToolStart && f.Tool != nil:
			fmt.Fprintf(out, "  … %s\n", f.Tool.Tool)
		case f.Type == contracts.FrameNotification && f.Notification != nil:
			fmt.Fprintf(out, "\n[notification] %s\n> ", f.Notification.Body)
		case f.Type == contracts.FrameError && f.Error != nil:
			if f.Error.ID != "" && f.Error.Code == contracts.ErrCodeUnavailable && s.notQueued(f.Error.ID) {
				continue
			}
			// Any other error naming a frame answers it: the server
			// refused it (invalid, rate limited), and resending would
			// not help.
			if f.Error.ID != "" {
				s.answered(f.Error.ID)
			}
			fmt.Fprintf(out, "\nerror: %s\n> ", f.Error.Message)
		}
	}
}

// lockedWriter lets the reader of the socket and the writer of frames
// print to one terminal.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func decision(text string) string {
	switch strings.ToLower(strings.Trim(text, ".! ")) {
	case "yes", "y", "ok", "approve", "confirm":
		return "approve"
	case "no", "n", "reject", "cancel":
		return "reject"
	}
	return ""
}

// localWebsocketURL is the websocket of a server listening on addr (the
// PURSER_HTTP_ADDR that `purser up` uses); a wildcard host is this machine.
func localWebsocketURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "ws://127.0.0.1:8080/v1/ws"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "ws://" + net.JoinHostPort(host, port) + "/v1/ws"
}
