// Package wsclient is purser's websocket client, the one `purser chat`,
// the bench and the chaos harness share. It dials /v1/ws with a bearer
// token, writes the client frames of the protocol (message, confirm,
// resume, ping), reads the server's frames, and keeps what the protocol
// asks a client to keep across sockets: the highest seq seen, which a new
// socket resumes after, and the frames the server has not acked, which a
// new socket sends again with the same id so that the server counts each
// once.
//
// When to reconnect, how long to wait, and what an error naming a frame
// means for that frame (send it again later, or give it up) are the
// caller's: the three callers differ there. CloseStatus tells them how
// the last socket ended: 1012 (a replica restarting) asks for a
// reconnect at once, with no back-off.
package wsclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

// ErrRefused marks a connection attempt the server answered with a status
// that another attempt would not change (a refused token, say).
var ErrRefused = errors.New("refused")

// ErrNotConnected is a write while the client has no socket.
var ErrNotConnected = errors.New("not connected")

// DialFunc opens a websocket; websocket.Dial is one.
type DialFunc func(ctx context.Context, url string, opts *websocket.DialOptions) (*websocket.Conn, *http.Response, error)

// Config says where a Client connects and how.
type Config struct {
	URL string // the websocket, ws://host:port/v1/ws
	// Token is sent as "Authorization: Bearer <token>"; "" sends none.
	Token string
	// ReadLimit bounds one server frame in bytes: 0 is 1 MiB, a negative
	// limit none.
	ReadLimit int64
	// Buffer is how many frames read wait for the caller before the
	// socket's reader waits too; default 64.
	Buffer int
	Dial   DialFunc // default websocket.Dial
}

// Client is one person's side of the protocol over a succession of
// sockets. Its methods are safe to call from several goroutines. Close
// ends the current socket and waits for its reader.
type Client struct {
	cfg Config

	mu      sync.Mutex
	sock    *socket // nil before Connect and after Close
	lastSeq int64
	// unacked holds the frames with a client id that the server has not
	// acked yet, in the order they were first sent.
	unacked []pending
	// closed is the close status of the latest socket that ended, -1
	// while it is open or when it ended without a close frame.
	closed websocket.StatusCode
}

type pending struct {
	id   string
	data []byte
}

// socket is one connection and the goroutine reading it.
type socket struct {
	conn   *websocket.Conn
	frames chan contracts.ServerFrame // closed when the reader ends
	stop   context.CancelFunc
	done   chan struct{}
}

func (s *socket) close() {
	s.stop()
	s.conn.CloseNow()
	<-s.done
}

// New returns a client that is not connected yet.
func New(cfg Config) *Client {
	if cfg.ReadLimit == 0 {
		cfg.ReadLimit = 1 << 20
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = 64
	}
	if cfg.Dial == nil {
		cfg.Dial = websocket.Dial
	}
	return &Client{cfg: cfg, closed: -1}
}

// StatusServiceRestart is the close status of a socket whose ingress
// replica is stopping (a rolling restart): reconnect at once, to another
// replica, and resume.
const StatusServiceRestart = websocket.StatusServiceRestart

// CloseStatus is the status the server closed the latest socket with,
// once that socket's Frames channel has closed: StatusServiceRestart,
// 4001 (token expired), 1008 (too slow) and so on. It is -1 while the
// socket is open, before the first, and when a socket dropped without a
// close frame.
func (c *Client) CloseStatus() websocket.StatusCode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Connect opens a socket in place of the current one, which it closes. It
// neither resumes nor sends anything again: Resume and ResendUnacked do,
// when the caller wants them. A refusal by status (401, 403, but not 429)
// wraps ErrRefused: connecting again would be refused again.
func (c *Client) Connect(ctx context.Context) error {
	opts := &websocket.DialOptions{HTTPHeader: http.Header{}, Subprotocols: []string{auth.Subprotocol}}
	if c.cfg.Token != "" {
		opts.HTTPHeader.Set("Authorization", "Bearer "+c.cfg.Token)
	}
	conn, resp, err := c.cfg.Dial(ctx, c.cfg.URL, opts)
	if err != nil {
		if resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return fmt.Errorf("connect to %s: %w (%s)", c.cfg.URL, ErrRefused, resp.Status)
		}
		return fmt.Errorf("connect to %s: %w", c.cfg.URL, err)
	}
	conn.SetReadLimit(c.cfg.ReadLimit)
	rctx, stop := context.WithCancel(context.Background())
	s := &socket{conn: conn, frames: make(chan contracts.ServerFrame, c.cfg.Buffer), stop: stop, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		c.read(rctx, s)
	}()
	c.mu.Lock()
	old := c.sock
	c.sock = s
	c.closed = -1
	c.mu.Unlock()
	if old != nil {
		old.close()
	}
	return nil
}

// read passes the socket's frames on until it fails or is closed. Each
// frame is noted before the caller sees it: its seq, and the frame its
// ack answers. A frame that is not JSON is skipped.
func (c *Client) read(ctx context.Context, s *socket) {
	defer close(s.frames)
	for {
		_, data, err := s.conn.Read(ctx)
		if err != nil {
			c.mu.Lock()
			if c.sock == s || c.sock == nil {
				c.closed = websocket.CloseStatus(err)
			}
			c.mu.Unlock()
			return
		}
		var f contracts.ServerFrame
		if json.Unmarshal(data, &f) != nil {
			continue
		}
		c.note(f)
		select {
		case s.frames <- f:
		case <-ctx.Done():
			return
		}
	}
}

func (c *Client) note(f contracts.ServerFrame) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lastSeq = max(c.lastSeq, f.Seq)
	if f.Type == contracts.FrameAck && f.Ack != nil {
		c.forget(f.Ack.ID)
	}
}

// Frames is the current socket's frames, closed when that socket ends:
// the caller then connects again if it wants more. Before Connect and
// after Close it is a closed channel.
func (c *Client) Frames() <-chan contracts.ServerFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sock == nil {
		closed := make(chan contracts.ServerFrame)
		close(closed)
		return closed
	}
	return c.sock.frames
}

// LastSeq is the highest seq seen on any socket, 0 before the first.
func (c *Client) LastSeq() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastSeq
}

// Unacked is how many frames wait for their ack.
func (c *Client) Unacked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.unacked)
}

// Pending reports whether frame id waits for its ack.
func (c *Client) Pending(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.find(id) >= 0
}

// SendMessage writes a message frame (its Type set here) and keeps it
// until the server acks its id; see send.
func (c *Client) SendMessage(ctx context.Context, m contracts.MessageFrame) error {
	m.Type = contracts.FrameMessage
	return c.send(ctx, m.ID, m)
}

// SendConfirm writes a decision on a proposal (its Type set here) and,
// when it has an id, keeps it until the server acks that id; see send.
func (c *Client) SendConfirm(ctx context.Context, cf contracts.ConfirmFrame) error {
	cf.Type = contracts.FrameConfirm
	return c.send(ctx, cf.ID, cf)
}

// Turn is a frame that starts a turn: a message or a decision, exactly
// one of the two.
type Turn struct {
	Message *contracts.MessageFrame
	Confirm *contracts.ConfirmFrame
}

// ID is the client id the turn is sent under.
func (t Turn) ID() string {
	if t.Message != nil {
		return t.Message.ID
	}
	return t.Confirm.ID
}

// SendTurn writes t with SendMessage or SendConfirm.
func (c *Client) SendTurn(ctx context.Context, t Turn) error {
	if t.Message != nil {
		return c.SendMessage(ctx, *t.Message)
	}
	return c.SendConfirm(ctx, *t.Confirm)
}

// send writes a frame with client id id. The frame is kept as unacked
// before it is written, so that a failed write leaves it for
// ResendUnacked on the next socket; a frame sent under an id that is
// still unacked is that frame sent again and keeps its place.
func (c *Client) send(ctx context.Context, id string, frame any) error {
	data, err := json.Marshal(frame)
	if err != nil {
		return fmt.Errorf("encode frame %s: %w", id, err)
	}
	if id != "" {
		c.mu.Lock()
		i := c.find(id)
		if i < 0 {
			c.unacked = append(c.unacked, pending{id: id, data: data})
		} else {
			c.unacked[i].data = data
		}
		c.mu.Unlock()
	}
	return c.write(ctx, data)
}

// Resume asks the current socket for every frame after the last seq seen
// (tokens excepted), even when none was seen yet.
func (c *Client) Resume(ctx context.Context) error {
	return c.writeFrame(ctx, contracts.ResumeFrame{Type: contracts.FrameResume, AfterSeq: c.LastSeq()})
}

// Ping asks the server for a pong frame.
func (c *Client) Ping(ctx context.Context) error {
	return c.writeFrame(ctx, contracts.PingFrame{Type: contracts.FramePing})
}

// ResendUnacked writes every unacked frame again, with its id, in the
// order they were first sent; it stops at the first failed write.
func (c *Client) ResendUnacked(ctx context.Context) error {
	c.mu.Lock()
	frames := make([][]byte, len(c.unacked))
	for i, p := range c.unacked {
		frames[i] = p.data
	}
	c.mu.Unlock()
	for _, data := range frames {
		if err := c.write(ctx, data); err != nil {
			return err
		}
	}
	return nil
}

// Resend writes frame id again if it is still unacked, and reports
// whether it was.
func (c *Client) Resend(ctx context.Context, id string) (bool, error) {
	c.mu.Lock()
	i := c.find(id)
	var data []byte
	if i >= 0 {
		data = c.unacked[i].data
	}
	c.mu.Unlock()
	if data == nil {
		return false, nil
	}
	return true, c.write(ctx, data)
}

// Forget stops waiting for frame id's ack: the server refused it, or the
// caller gave it up. It is not sent again.
func (c *Client) Forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forget(id)
}

// forget is Forget with c.mu held.
func (c *Client) forget(id string) {
	if i := c.find(id); i >= 0 {
		c.unacked = append(c.unacked[:i:i], c.unacked[i+1:]...)
	}
}

// find is the index of unacked frame id, -1 if there is none; c.mu held.
func (c *Client) find(id string) int {
	for i, p := range c.unacked {
		if p.id == id {
			return i
		}
	}
	return -1
}

func (c *Client) writeFrame(ctx context.Context, frame any) error {
	data, err := json.Marshal(frame)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	return c.write(ctx, data)
}

func (c *Client) write(ctx context.Context, data []byte) error {
	c.mu.Lock()
	s := c.sock
	c.mu.Unlock()
	if s == nil {
		return ErrNotConnected
	}
	if err := s.conn.Write(ctx, websocket.MessageText, data); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// Close closes the current socket, if any, and waits for its reader. The
// unacked frames and the last seq stay: Connect may follow.
func (c *Client) Close() {
	c.mu.Lock()
	s := c.sock
	c.sock = nil
	c.mu.Unlock()
	if s != nil {
		s.close()
	}
}
