package ingress

// DeliverLive hands frame to the user's sockets on this ingress at once,
// as if it had come live from the notifier.
func (in *Ingress) DeliverLive(tenant, user string, frame []byte) {
	in.hub.fanOut(userKey{tenant, user}, newOutFrame(frame, ""))
}
