//go:build !unix

package ingress

// fillRaw is never reached without unix descriptors: reads block holding
// a buffer.
func (c *leanConn) fillRaw() (int, error) {
	c.borrowRead()
	return c.Conn.Read(*c.rbuf)
}

// awaitRaw is never reached without unix descriptors.
func (c *leanConn) awaitRaw() {}
