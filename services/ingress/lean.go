package ingress

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// An idle socket should hold no buffer. The websocket library reads and
// writes through the bufio.Reader and bufio.Writer the hijacked HTTP
// connection hands it, 4 KiB each for as long as the socket lives. Here it
// gets 16-byte ones instead, over a leanConn that borrows a 4 KiB buffer
// from a pool only while bytes pass: while it waits for the client it
// holds none, and a frame still goes out in one write.

// leanBufSize is the size of the pooled buffers, that of net/http's.
const leanBufSize = 4096

var leanBufs = sync.Pool{New: func() any { b := make([]byte, leanBufSize); return &b }}

// leanHijacker hands the websocket library a leanConn when it hijacks the
// connection.
type leanHijacker struct {
	http.ResponseWriter
	conn *leanConn
}

func (w *leanHijacker) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *leanHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	lc := &leanConn{Conn: conn}
	if sc, ok := conn.(syscall.Conn); ok {
		lc.raw, _ = sc.SyscallConn()
	}
	w.conn = lc
	if n := brw.Reader.Buffered(); n > 0 {
		// Bytes the client sent after its request: they come first.
		b, _ := brw.Reader.Peek(n)
		lc.borrowRead()
		lc.rpend = (*lc.rbuf)[:copy(*lc.rbuf, b)]
		lc.npend.Store(int64(len(lc.rpend)))
	}
	return lc, bufio.NewReadWriter(bufio.NewReaderSize(lc, 16), bufio.NewWriterSize(lc, 16)), nil
}

// leanConn reads and writes a websocket's connection through pooled
// buffers. Reads are the library's reader's alone (one at a time, under
// its read lock), writes happen under its write lock: neither side needs a
// lock here. Only awaitInput, on the socket's own goroutine, looks in from
// outside: at npend.
type leanConn struct {
	net.Conn

	// rbuf is the borrowed read buffer, rpend what of it is still to be
	// read (npend bytes); rbuf goes back to the pool once rpend is empty.
	rbuf  *[]byte
	rpend []byte
	npend atomic.Int64
	// in follows the client's frames as far as the library has read them.
	in frameTracker
	// synthetic is set when Read made up an empty binary frame to end the
	// library's read after a control frame (see Read).
	synthetic atomic.Bool

	// wmu guards the write side. The library writes under a lock of its
	// own; the socket's writer also sets hold, from outside it.
	wmu sync.Mutex
	// hold keeps a finished data frame in the buffer, to go out with the
	// next one in one write: the socket's writer sets it while the frame
	// after the one it writes is ready too (see holdFrames).
	hold bool
	// wbuf is the borrowed write buffer, wout what waits in it to go
	// out at the end of the frame being written (or, held, after it).
	wbuf *[]byte
	wout []byte
	// The frame being written: its header so far (hn bytes, of hlen once
	// known), then need payload bytes still to come.
	hdr  [14]byte
	hn   int
	need uint64
	// control: the frame being written is a control frame.
	control bool

	// raw reads the connection's descriptor itself, so that a read that
	// would block gives its buffer back before it waits; nil where the
	// connection has none (reads then block holding a buffer).
	raw     syscall.RawConn
	rawRead func(fd uintptr) bool
	rn      int
	rerr    error
}

func (c *leanConn) borrowRead() {
	if c.rbuf == nil {
		c.rbuf = leanBufs.Get().(*[]byte)
	}
}

func (c *leanConn) returnRead() {
	if c.rbuf != nil {
		leanBufs.Put(c.rbuf)
		c.rbuf, c.rpend = nil, nil
	}
}

// wakeFrame is an empty binary frame from a client (masked, with a zero
// key), which Read makes up to end the library's read.
var wakeFrame = [6]byte{0x82, 0x80}

// Read hands the library the client's bytes. The library reads on past
// a control frame (a pong to the server's ping) to the next data frame,
// holding its reader's stack deep, where the runtime cannot shrink it:
// so when it asks for the next frame after a control frame and none has
// come, Read makes up an empty binary frame instead of waiting, and the
// socket's reader, which skips it, waits in awaitInput. The bufio buffer
// above asks for more only once it is empty, so what Read handed out is
// what the library has read.
func (c *leanConn) Read(p []byte) (int, error) {
	if len(c.rpend) == 0 && c.in.between() && c.in.afterControl {
		c.borrowRead()
		c.rpend = (*c.rbuf)[:copy(*c.rbuf, wakeFrame[:])]
		c.npend.Store(int64(len(c.rpend)))
		c.synthetic.Store(true)
	}
	if len(c.rpend) > 0 {
		return c.handOut(p), nil
	}
	if len(p) >= leanBufSize {
		n, err := c.Conn.Read(p) // the caller's own buffer is large enough
		c.in.feed(p[:max(n, 0)])
		return n, err
	}
	n, err := c.fill()
	if n <= 0 {
		c.returnRead()
		return 0, err
	}
	c.rpend = (*c.rbuf)[:n]
	return c.handOut(p), err
}

// handOut copies what is pending into p, gives the buffer back once
// nothing is left in it, and tells the frame tracker what the library
// got.
func (c *leanConn) handOut(p []byte) int {
	n := copy(p, c.rpend)
	c.rpend = c.rpend[n:]
	c.npend.Store(int64(len(c.rpend)))
	if len(c.rpend) == 0 {
		c.returnRead()
	}
	c.in.feed(p[:n])
	return n
}

// fill reads what the connection has into a borrowed buffer, waiting for
// bytes without one where it can.
func (c *leanConn) fill() (int, error) {
	if c.raw == nil {
		c.borrowRead()
		return c.Conn.Read(*c.rbuf)
	}
	return c.fillRaw()
}

// takeSynthetic reports whether the frame the library just returned was
// made up by Read, and forgets it.
func (c *leanConn) takeSynthetic() bool { return c.synthetic.CompareAndSwap(true, false) }

// awaitInput waits, shallow in the socket's goroutine and holding no
// buffer, until the client has sent something; the library's read then
// does not wait long. A goroutine parked here uses little of its stack, so
// a collection shrinks the stack to the smallest.
func (c *leanConn) awaitInput() {
	if c.npend.Load() > 0 || c.raw == nil {
		return
	}
	c.awaitRaw()
}

// frameTracker follows a stream of websocket frames from a client.
type frameTracker struct {
	hdr  [14]byte
	hn   int
	need uint64
	// afterControl: the latest frame was a control frame; midMessage: a
	// data message's last frame is still to come.
	afterControl bool
	midMessage   bool
}

// between reports whether the stream is between two frames, not within
// a message.
func (t *frameTracker) between() bool { return t.hn == 0 && t.need == 0 && !t.midMessage }

func (t *frameTracker) feed(p []byte) {
	for len(p) > 0 {
		if t.need > 0 {
			k := uint64(len(p))
			if k > t.need {
				k = t.need
			}
			p = p[k:]
			t.need -= k
			continue
		}
		t.hdr[t.hn] = p[0]
		t.hn++
		p = p[1:]
		if t.hn < 2 || t.hn < headerLen(t.hdr[:t.hn]) {
			continue
		}
		op, fin := t.hdr[0]&0x0f, t.hdr[0]&0x80 != 0
		t.afterControl = op >= 8
		if !t.afterControl {
			t.midMessage = !fin
		}
		t.need = payloadLen(t.hdr[:t.hn])
		t.hn = 0
	}
}

// Write takes the library's bytes, a stream of websocket frames, and sends
// each frame with one write once its last byte came (a frame larger than
// the buffer with more than one), or with the next frame while hold is
// set; between writes it holds no buffer.
func (c *leanConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	total := len(p)
	for len(p) > 0 {
		if c.need == 0 {
			// A header, or the rest of one.
			for len(p) > 0 && (c.hn < 2 || c.hn < headerLen(c.hdr[:c.hn])) {
				c.hdr[c.hn] = p[0]
				c.hn++
				p = p[1:]
			}
			if c.hn < 2 || c.hn < headerLen(c.hdr[:c.hn]) {
				break
			}
			if err := c.out(c.hdr[:c.hn]); err != nil {
				return total - len(p), err
			}
			c.need = payloadLen(c.hdr[:c.hn])
			c.control = c.hdr[0]&0x0f >= 8
			c.hn = 0
			if c.need == 0 {
				if err := c.frameEnd(); err != nil {
					return total - len(p), err
				}
			}
			continue
		}
		k := len(p)
		if uint64(k) > c.need {
			k = int(c.need)
		}
		if err := c.out(p[:k]); err != nil {
			return total - len(p), err
		}
		p = p[k:]
		c.need -= uint64(k)
		if c.need == 0 {
			if err := c.frameEnd(); err != nil {
				return total - len(p), err
			}
		}
	}
	return total, nil
}

// out adds b to the frame being written: into the buffer when it fits,
// else after what the buffer held.
func (c *leanConn) out(b []byte) error {
	if c.wbuf == nil {
		c.wbuf = leanBufs.Get().(*[]byte)
		c.wout = (*c.wbuf)[:0]
	}
	if len(c.wout)+len(b) <= cap(c.wout) {
		c.wout = append(c.wout, b...)
		return nil
	}
	if err := c.flush(); err != nil {
		return err
	}
	if len(b) >= leanBufSize {
		return c.send(b)
	}
	return c.out(b)
}

// frameEnd sends the frame just completed, with any held before it,
// unless hold asks to keep it for the next. A control frame (a ping, a
// close) is never kept: nothing may be behind it.
func (c *leanConn) frameEnd() error {
	if c.hold && !c.control {
		return nil
	}
	return c.flush()
}

// holdFrames sets whether data frames finished from now on wait for the
// next one, so that frames queued together reach the client in one
// write: the socket's writer sets it, before each frame, to whether it
// has the next frame in hand. It sends nothing itself: what waits goes
// out with the end of the next frame. Safe on a nil leanConn, as is
// release.
func (c *leanConn) holdFrames(on bool) {
	if c == nil {
		return
	}
	c.wmu.Lock()
	c.hold = on
	c.wmu.Unlock()
}

// release clears hold and sends what waits, once no frame is half
// written: the socket's writer calls it when it stops.
func (c *leanConn) release() error {
	if c == nil {
		return nil
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.hold = false
	if c.need == 0 && c.hn == 0 {
		return c.flush()
	}
	return nil
}

// leanWriteTimeout bounds each write to the connection: a client that
// stops reading fails the write, and the socket closes.
const leanWriteTimeout = 10 * time.Second

// send writes b to the connection under leanWriteTimeout. The deadline
// is the connection's own, set again for each write: the socket's writer
// then needs no context with a timer of its own for every frame.
func (c *leanConn) send(b []byte) error {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(leanWriteTimeout)); err != nil {
		return err
	}
	_, err := c.Conn.Write(b)
	return err
}

// flush writes what the buffer holds and returns the buffer.
func (c *leanConn) flush() error {
	if c.wbuf == nil {
		return nil
	}
	var err error
	if len(c.wout) > 0 {
		err = c.send(c.wout)
	}
	leanBufs.Put(c.wbuf)
	c.wbuf, c.wout = nil, nil
	return err
}

// headerLen is the length of the websocket frame header that begins with
// h (at least its first two bytes).
func headerLen(h []byte) int {
	n := 2
	switch h[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if h[1]&0x80 != 0 {
		n += 4 // masking key
	}
	return n
}

// payloadLen is the payload length a complete frame header gives.
func payloadLen(h []byte) uint64 {
	switch l := h[1] & 0x7f; l {
	case 126:
		return uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		return binary.BigEndian.Uint64(h[2:10])
	default:
		return uint64(l)
	}
}

var _ io.ReadWriter = (*leanConn)(nil)
