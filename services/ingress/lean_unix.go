//go:build unix

package ingress

import (
	"io"
	"syscall"
)

// fillRaw reads the descriptor itself: a read that would block hands its
// buffer back, then the poller waits for bytes, then it reads again.
func (c *leanConn) fillRaw() (int, error) {
	var n int
	var rerr error
	err := c.raw.Read(func(fd uintptr) bool {
		c.borrowRead()
		for {
			n, rerr = syscall.Read(int(fd), *c.rbuf)
			if rerr != syscall.EINTR {
				break
			}
		}
		if rerr == syscall.EAGAIN {
			c.returnRead()
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, rerr
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}
