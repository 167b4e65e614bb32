package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/wsclient"
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
			if conversation == "" {
				conversation = newCLIConversation()
			}
			return chat(ctx, chatClient(url, token), os.Stdin, stdout, conversation, tz)
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "websocket URL (default: the local server at PURSER_HTTP_ADDR, ws://127.0.0.1:8080/v1/ws)")
	cmd.Flags().StringVar(&token, "token", "", "bearer token (default $PURSER_TOKEN, else one minted for the demo user)")
	cmd.Flags().StringVar(&conversation, "conversation", "", "conversation id (default: a new one, cli- and 16 random hex digits)")
	cmd.Flags().StringVar(&tz, "timezone", "UTC", "your IANA time zone")
	return cmd
}

// newCLIConversation is a fresh conversation id for a terminal chat: random,
// so that no two chats started in the same second share one.
func newCLIConversation() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "cli-" + hex.EncodeToString(b)
}

// chatClient is the websocket client of the terminal: it reads frames of
// any size (the server bounds its own).
func chatClient(url, token string) *wsclient.Client {
	return wsclient.New(wsclient.Config{URL: url, Token: token, ReadLimit: -1})
}

// chatSession is the terminal's side of a chat across reconnects; the
// client keeps the frames not acked yet and the highest seq seen.
type chatSession struct {
	out          io.Writer
	conversation string
	tz           string
	client       *wsclient.Client

	mu sync.Mutex
	// tries counts the server's "unavailable" answers to a frame;
	// waiting holds the frames whose resend is due.
	tries   map[string]int
	waiting map[string]bool
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

// notQueuedTries bounds how often a frame the server could not queue is
// sent again before the person is told it failed.
const notQueuedTries = 5

// errDisconnected ends one socket's life: the session reconnects.
var errDisconnected = errors.New("disconnected")

// chat runs the terminal client until in ends and every frame written was
// acked, or ctx ends. A dropped socket is dialled again, with back-off;
// the new socket resumes after the last seq seen and resends every frame
// that was not acked, with its id, so that the server counts it once.
func chat(ctx context.Context, client *wsclient.Client, in io.Reader, out io.Writer, conversation, tz string) error {
	out = &lockedWriter{w: out} // the socket's reader prints too
	s := &chatSession{out: out, conversation: conversation, tz: tz, client: client, tries: map[string]int{}, waiting: map[string]bool{},
		acked: make(chan struct{}, 1), proposals: make(chan string, 8), due: make(chan string), ended: make(chan struct{})}
	defer close(s.ended)
	defer client.Close()
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
		if err := client.Connect(ctx); err != nil {
			if !connected || errors.Is(err, wsclient.ErrRefused) || ctx.Err() != nil {
				return err
			}
			fmt.Fprintf(out, "\n(%s; retrying in %s)\n", contracts.VisibleText(err.Error()), backoff)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		err := s.serve(ctx, lines, connected)
		if !errors.Is(err, errDisconnected) {
			return err
		}
		connected = true
		if client.CloseStatus() == wsclient.StatusServiceRestart {
			// A replica restarting (a rolling deploy): the next socket
			// lands on another one at once and resumes there.
			fmt.Fprint(out, "\n(server restarting; reconnecting)\n")
			continue
		}
		fmt.Fprint(out, "\n(connection lost; reconnecting)\n")
	}
}

// serve runs one socket: after a reconnect it resumes and resends what was
// not acked, then writes each line as a frame. It returns nil once the
// input ended and every frame was acked, errDisconnected when the socket
// dropped.
func (s *chatSession) serve(ctx context.Context, lines <-chan string, again bool) error {
	dead := make(chan struct{})
	frames := s.client.Frames()
	go func() {
		defer close(dead)
		for f := range frames {
			s.show(f)
		}
	}()
	defer func() { s.client.Close(); <-dead }()
	failed := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errDisconnected
	}
	if again {
		s.mu.Lock()
		clear(s.waiting) // resent below
		s.mu.Unlock()
		if s.client.LastSeq() > 0 {
			if err := s.client.Resume(ctx); err != nil {
				return failed(err)
			}
		}
		if err := s.client.ResendUnacked(ctx); err != nil {
			return failed(err)
		}
	}
	for n := 1; ; n++ {
		if lines == nil && s.client.Unacked() == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-dead:
			return errDisconnected
		case <-s.acked:
		case id := <-s.due:
			if s.takeDue(id) {
				if _, err := s.client.Resend(ctx, id); err != nil {
					return failed(err)
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
			if err := s.send(ctx, text, n); err != nil {
				return failed(err)
			}
		}
	}
}

// send writes the frame for a typed line: a decision on the newest
// proposal for yes or no while one waits, a message otherwise. Each has
// an id of its own, which a resend keeps.
func (s *chatSession) send(ctx context.Context, text string, n int) error {
	id := fmt.Sprintf("m%d-%d", time.Now().UnixNano(), n)
	if d := decision(text); d != "" {
		select {
		case p := <-s.proposals:
			return s.client.SendConfirm(ctx, contracts.ConfirmFrame{ID: id, ConversationID: s.conversation, ProposalID: p, Decision: d})
		default:
		}
	}
	return s.client.SendMessage(ctx, contracts.MessageFrame{ID: id, ConversationID: s.conversation, Text: text, Timezone: s.tz})
}

// answered notes that frame id needs nothing more: acked (the client
// dropped it already), or refused and given up.
func (s *chatSession) answered(id string) {
	s.client.Forget(id)
	s.mu.Lock()
	delete(s.tries, id)
	delete(s.waiting, id)
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
	if !s.client.Pending(id) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tries[id]++; s.tries[id] >= notQueuedTries {
		return false
	}
	wait := min(notQueuedBackoff<<(s.tries[id]-1), 8*time.Second)
	s.waiting[id] = true
	fmt.Fprintf(s.out, "\n(not queued yet; sending it again in %s)\n", wait)
	time.AfterFunc(wait, func() {
		select {
		case s.due <- id:
		case <-s.ended:
		}
	})
	return true
}

// takeDue reports whether frame id is still to be sent again: not acked
// meanwhile, nor resent by a reconnect.
func (s *chatSession) takeDue(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	due := s.waiting[id]
	delete(s.waiting, id)
	return due
}

// show prints one frame of the socket. Every string of a frame may quote
// a mail or a statement, so it is printed as contracts.TerminalText: no
// escape sequence, carriage return or bidi override from the server
// reaches the terminal, and markdown escapes show as the characters they
// escape.
func (s *chatSession) show(f contracts.ServerFrame) {
	out := s.out
	text := contracts.TerminalText
	switch {
	case f.Type == contracts.FrameAck && f.Ack != nil:
		s.answered(f.Ack.ID)
	case f.Type == contracts.FrameAnswer && f.Answer != nil:
		fmt.Fprintf(out, "\npurser: %s\n> ", text(f.Answer.Content))
	case f.Type == contracts.FrameClarify && f.Clarify != nil:
		fmt.Fprintf(out, "\npurser asks: %s\n> ", text(f.Clarify.Question))
	case f.Type == contracts.FrameProposal && f.Proposal != nil:
		fmt.Fprintf(out, "\npurser proposes: %s (yes/no)\n> ", text(f.Proposal.Summary))
		select {
		case s.proposals <- f.Proposal.ProposalID:
		default:
		}
	case f.Type == contracts.FrameToolStart && f.Tool != nil:
		fmt.Fprintf(out, "  … %s\n", text(f.Tool.Tool))
	case f.Type == contracts.FrameNotification && f.Notification != nil:
		fmt.Fprintf(out, "\n[notification] %s\n> ", text(f.Notification.Body))
	case f.Type == contracts.FrameError && f.Error != nil:
		if f.Error.ID != "" && f.Error.Code == contracts.ErrCodeUnavailable && s.notQueued(f.Error.ID) {
			return
		}
		// Any other error naming a frame answers it: the server
		// refused it (invalid, rate limited), and resending would
		// not help.
		if f.Error.ID != "" {
			s.answered(f.Error.ID)
		}
		fmt.Fprintf(out, "\nerror: %s\n> ", text(f.Error.Message))
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
