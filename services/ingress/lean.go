package ingress

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
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
type leanHijacker struct{ http.ResponseWriter }

func (w leanHijacker) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w leanHijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	lc := &leanConn{Conn: conn}
	if n := brw.Reader.Buffered(); n > 0 {
		// Bytes the client sent after its request: they come first.
		b, _ := brw.Reader.Peek(n)
		lc.borrowRead()
		lc.rpend = (*lc.rbuf)[:copy(*lc.rbuf, b)]
	}
	return lc, bufio.NewReadWriter(bufio.NewReaderSize(lc, 16), bufio.NewWriterSize(lc, 16)), nil
}

// leanConn reads and writes a websocket's connection through pooled
// buffers. Reads are the library's reader's alone, writes happen under its
// write lock: neither side needs a lock here.
type leanConn struct {
	net.Conn

	// rbuf is the borrowed read buffer, rpend what of it is still to be
	// read; rbuf goes back to the pool once rpend is empty.
	rbuf  *[]byte
	rpend []byte

	// wbuf is the borrowed write buffer, wout what waits in it to go
	// out at the end of the frame being written.
	wbuf *[]byte
	wout []byte
	// The frame being written: its header so far (hn bytes, of hlen once
	// known), then need payload bytes still to come.
	hdr  [14]byte
	hn   int
	need uint64

	// raw reads the connection's descriptor itself, so that a read that
	// would block gives its buffer back before it waits; nil where the
	// connection has none (reads then block holding a buffer).
	raw     syscall.RawConn
	rawDone bool
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

func (c *leanConn) Read(p []byte) (int, error) {
	if len(c.rpend) > 0 {
		n := copy(p, c.rpend)
		c.rpend = c.rpend[n:]
		if len(c.rpend) == 0 {
			c.returnRead()
		}
		return n, nil
	}
	if len(p) >= leanBufSize {
		return c.Conn.Read(p) // the caller's own buffer is large enough
	}
	n, err := c.fill()
	if n <= 0 {
		c.returnRead()
		return 0, err
	}
	c.rpend = (*c.rbuf)[:n]
	m := copy(p, c.rpend)
	c.rpend = c.rpend[m:]
	if len(c.rpend) == 0 {
		c.returnRead()
	}
	return m, err
}

// fill reads what the connection has into a borrowed buffer, waiting for
// bytes without one where it can.
func (c *leanConn) fill() (int, error) {
	if !c.rawDone {
		c.rawDone = true
		if sc, ok := c.Conn.(syscall.Conn); ok {
			c.raw, _ = sc.SyscallConn()
		}
	}
	if c.raw == nil {
		c.borrowRead()
		return c.Conn.Read(*c.rbuf)
	}
	return c.fillRaw()
}

// Write takes the library's bytes, a stream of websocket frames, and sends
// each frame with one write once its last byte came (a frame larger than
// the buffer with more than one); between frames it holds no buffer.
func (c *leanConn) Write(p []byte) (int, error) {
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
			c.hn = 0
			if c.need == 0 {
				if err := c.flush(); err != nil {
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
			if err := c.flush(); err != nil {
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
		_, err := c.Conn.Write(b)
		return err
	}
	return c.out(b)
}

// flush writes what the buffer holds and returns the buffer.
func (c *leanConn) flush() error {
	if c.wbuf == nil {
		return nil
	}
	var err error
	if len(c.wout) > 0 {
		_, err = c.Conn.Write(c.wout)
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
