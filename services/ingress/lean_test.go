package ingress

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"testing"
	"time"
)

// recordConn records each write as it reached the connection, and
// counts the writes made under a write deadline still to come.
type recordConn struct {
	net.Conn
	writes   [][]byte
	deadline time.Time
	bounded  int
}

func (r *recordConn) Write(p []byte) (int, error) {
	r.writes = append(r.writes, bytes.Clone(p))
	if time.Now().Before(r.deadline) {
		r.bounded++
	}
	return len(p), nil
}

func (r *recordConn) SetWriteDeadline(t time.Time) error {
	r.deadline = t
	return nil
}

// frame builds a server websocket frame with an n-byte payload.
func frame(n int, fill byte) []byte {
	var h []byte
	switch {
	case n < 126:
		h = []byte{0x81, byte(n)}
	case n < 1<<16:
		h = []byte{0x81, 126, 0, 0}
		binary.BigEndian.PutUint16(h[2:], uint16(n))
	default:
		h = make([]byte, 10)
		h[0], h[1] = 0x81, 127
		binary.BigEndian.PutUint64(h[2:], uint64(n))
	}
	return append(h, bytes.Repeat([]byte{fill}, n)...)
}

// Whatever pieces the library writes a frame in, the bytes reach the
// connection unchanged, and a frame that fits the buffer in one write.
func TestLeanConnWritesEachFrameOnce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{0, 1, 125, 126, 127, 4000, 4082, 4086, 4090, 4096, 5000, 65535, 65536, 100_000}
	for trial := range 200 {
		rc := &recordConn{}
		lc := &leanConn{Conn: rc}
		var stream []byte
		var small int // frames that fit the buffer whole
		for i := range 5 {
			f := frame(sizes[rng.IntN(len(sizes))], byte('a'+i))
			if len(f) <= leanBufSize {
				small++
			}
			stream = append(stream, f...)
		}
		// Write the stream in random pieces, as a 16-byte bufio.Writer
		// and direct writes of payloads would.
		for rest := stream; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(9000))
			if _, err := lc.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if got := bytes.Join(rc.writes, nil); !bytes.Equal(got, stream) {
			t.Fatalf("trial %d: the connection got %d bytes, not the %d written", trial, len(got), len(stream))
		}
		if lc.wbuf != nil {
			t.Fatalf("trial %d: a write buffer is still held between frames", trial)
		}
		if rc.bounded != len(rc.writes) {
			t.Fatalf("trial %d: %d of %d writes had no deadline: a client that stops reading would hold the writer", trial,
				len(rc.writes)-rc.bounded, len(rc.writes))
		}
		if allSmall := small == 5; allSmall && len(rc.writes) != 5 {
			t.Fatalf("trial %d: 5 small frames took %d writes", trial, len(rc.writes))
		}
	}
}

// Frames written while hold is set wait for the next and go out with it
// in one write; a control frame (a ping, a close) takes what waits with it
// at once; release sends the rest, and between writes nothing is held.
func TestLeanConnHoldsFramesForTheNext(t *testing.T) {
	ping := []byte{0x89, 0x00}
	a, b, c, d := frame(10, 'a'), frame(20, 'b'), frame(30, 'c'), frame(5000, 'd')
	write := func(t *testing.T, lc *leanConn, f []byte) {
		t.Helper()
		// In pieces, as the library writes: header, then payload.
		if _, err := lc.Write(f[:2]); err != nil {
			t.Fatal(err)
		}
		if _, err := lc.Write(f[2:]); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		run  func(t *testing.T, lc *leanConn)
		want [][]byte
	}{
		{"held frames go out with the first not held", func(t *testing.T, lc *leanConn) {
			lc.holdFrames(true)
			write(t, lc, a)
			write(t, lc, b)
			lc.holdFrames(false)
			write(t, lc, c)
		}, [][]byte{cat(a, b, c)}},
		{"a control frame is not held and takes what waits", func(t *testing.T, lc *leanConn) {
			lc.holdFrames(true)
			write(t, lc, a)
			write(t, lc, ping)
			write(t, lc, b)
			if err := lc.release(); err != nil {
				t.Fatal(err)
			}
		}, [][]byte{cat(a, ping), b}},
		{"a frame past the buffer sends what waits first", func(t *testing.T, lc *leanConn) {
			lc.holdFrames(true)
			write(t, lc, a)
			lc.holdFrames(false)
			write(t, lc, d)
		}, [][]byte{cat(a, d[:4]), d[4:]}},
		{"release sends what waits", func(t *testing.T, lc *leanConn) {
			lc.holdFrames(true)
			write(t, lc, a)
			if err := lc.release(); err != nil {
				t.Fatal(err)
			}
			write(t, lc, b) // not held any more
		}, [][]byte{a, b}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &recordConn{}
			lc := &leanConn{Conn: rc}
			tt.run(t, lc)
			if len(rc.writes) != len(tt.want) {
				t.Fatalf("%d writes, want %d", len(rc.writes), len(tt.want))
			}
			for i := range tt.want {
				if !bytes.Equal(rc.writes[i], tt.want[i]) {
					t.Fatalf("write %d: %d bytes %q..., want %d bytes %q...", i, len(rc.writes[i]), rc.writes[i][:min(8, len(rc.writes[i]))],
						len(tt.want[i]), tt.want[i][:min(8, len(tt.want[i]))])
				}
			}
			if lc.wbuf != nil {
				t.Fatal("a write buffer is still held after the last frame went out")
			}
		})
	}
	var none *leanConn // a socket the library could not hand a leanConn
	none.holdFrames(true)
	if err := none.release(); err != nil {
		t.Fatal(err)
	}
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
