package ingress

// DeliverLive hands frame to the user's sockets on this ingress at once,
// as if it had come live from the notifier.
func (in *Ingress) DeliverLive(tenant, user string, frame []byte) {
	in.hub.fanOut(userKey{tenant, user}, newOutFrame(frame, ""))
}

// WritersRunning is how many sockets have a writer goroutine running now.
func (in *Ingress) WritersRunning() int {
	n := 0
	for _, c := range in.hub.all() {
		c.qmu.Lock()
		if c.writing {
			n++
		}
		c.qmu.Unlock()
	}
	return n
}
