//go:build unix

package ingress

import (
	"io"
	"syscall"
)

// fillRaw reads the descriptor itself: a read that would block hands its
// buffer back, then the poller waits for bytes, then it reads again.
func (c *leanConn) fillRaw() (int, error) {
	if c.rawRead == nil {
		c.rawRead = c.readFD // made once: a closure per read would be garbage
	}
	c.rn, c.rerr = 0, nil
	err := c.raw.Read(c.rawRead)
	n, rerr := c.rn, c.rerr
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

// readFD reads the descriptor into a borrowed buffer; false, with the
// buffer given back, when that would block.
func (c *leanConn) readFD(fd uintptr) bool {
	c.borrowRead()
	for {
		c.rn, c.rerr = syscall.Read(int(fd), *c.rbuf)
		if c.rerr != syscall.EINTR {
			break
		}
	}
	if c.rerr == syscall.EAGAIN {
		c.returnRead()
		return false
	}
	return true
}

// awaitRaw waits until the descriptor has bytes to read (or an end),
// peeking at one byte, none taken.
func (c *leanConn) awaitRaw() {
	var one [1]byte
	_ = c.raw.Read(func(fd uintptr) bool {
		for {
			_, _, err := syscall.Recvfrom(int(fd), one[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
			if err != syscall.EINTR {
				return err != syscall.EAGAIN
			}
		}
	})
}
