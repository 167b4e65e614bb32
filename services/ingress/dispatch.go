package ingress

import (
	"sync"

	"github.com/nats-io/nats.go"
)

// dispatcher carries frames from the users' deliver subscriptions to
// their sockets without a goroutine per subscription, which an async
// nats.go subscription costs (its goroutine is most of an idle user's
// memory). Each user keeps a subscription of their own, so a replica
// receives only its own users' frames; every subscription puts its
// messages on one shared channel.
//
// A channel subscription drops what does not fit in the channel, so a
// mover takes each message off the channel at once into a queue with a
// limit per user, the same as an async subscription's pending limit; a
// worker, started while the queue holds messages, hands them to the hub in
// arrival order. One queue keeps each user's frames in order. Should
// frames be dropped all the same (the channel full while the mover waits
// for a CPU, or a user past their limit), lost is told the subject, and
// the user's sockets catch up from the store, as after a NATS reconnect.
type dispatcher struct {
	ch      chan *nats.Msg
	deliver func(k userKey, m *nats.Msg)
	lost    func(k userKey)
	// limit is how many bytes of one user's frames may wait; past it, new
	// ones are dropped (the socket fills the gap from the store).
	limit int

	mu      sync.Mutex
	subs    map[string]*pendingSub // by subject
	queue   fifo[*nats.Msg]
	working bool
	// stop ends the mover; moverDone closes once it has.
	stop      chan struct{}
	moverDone chan struct{}
}

type pendingSub struct {
	key     userKey
	pending int // bytes queued
	// dropping is set from a frame dropped past the limit until one fits
	// again: lost hears of each such run once.
	dropping bool
}

// dispatchChannelLen is the shared channel's room: only the mover's
// hand-off, which takes a message off in a few operations; 512 KiB of
// pointers, touched only as far as a backlog reaches.
const dispatchChannelLen = 1 << 16

func newDispatcher(limit int, deliver func(userKey, *nats.Msg), lost func(userKey)) *dispatcher {
	return &dispatcher{ch: make(chan *nats.Msg, dispatchChannelLen), deliver: deliver, lost: lost, limit: limit, subs: map[string]*pendingSub{},
		queue: fifo[*nats.Msg]{compactAfter: 1024}}
}

// dropped reports that the client library dropped frames of subject.
func (d *dispatcher) dropped(subject string) {
	d.mu.Lock()
	ps, ok := d.subs[subject]
	d.mu.Unlock()
	if ok {
		d.lost(ps.key)
	}
}

// subscribe subscribes to subject for user k. Frames on it reach deliver.
func (d *dispatcher) subscribe(nc *nats.Conn, subject string, k userKey) (*nats.Subscription, error) {
	d.mu.Lock()
	d.subs[subject] = &pendingSub{key: k}
	start := d.stop == nil
	var prev, stop, done chan struct{}
	if start {
		prev = d.moverDone
		stop, done = make(chan struct{}), make(chan struct{})
		d.stop, d.moverDone = stop, done
	}
	d.mu.Unlock()
	if start {
		go func() {
			if prev != nil {
				<-prev // one mover at a time, or two could swap frames
			}
			d.move(stop, done)
		}()
	}
	sub, err := nc.ChanSubscribe(subject, d.ch)
	if err != nil {
		d.unsubscribe(nil, subject)
	}
	return sub, err
}

// unsubscribe drops the subscription; its frames still queued are not
// delivered. The mover stops with the last subscription.
func (d *dispatcher) unsubscribe(sub *nats.Subscription, subject string) {
	if sub != nil {
		_ = sub.Unsubscribe()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.subs, subject)
	if len(d.subs) == 0 && d.stop != nil {
		close(d.stop)
		d.stop = nil
	}
}

// move takes messages off the channel into the queue until stop closes.
func (d *dispatcher) move(stop, done chan struct{}) {
	defer close(done)
	for {
		select {
		case <-stop:
			return
		case m := <-d.ch:
			d.push(m)
		}
	}
}

func (d *dispatcher) push(m *nats.Msg) {
	d.mu.Lock()
	ps, ok := d.subs[m.Subject]
	if !ok {
		d.mu.Unlock()
		return // its user has gone
	}
	size := len(m.Data)
	if ps.pending+size > d.limit {
		first := !ps.dropping
		ps.dropping = true
		d.mu.Unlock()
		if first {
			d.lost(ps.key)
		}
		return
	}
	defer d.mu.Unlock()
	ps.dropping = false
	ps.pending += size
	d.queue.push(m)
	if !d.working {
		d.working = true
		go d.work()
	}
}

// work delivers queued messages in order and returns once none is left.
func (d *dispatcher) work() {
	for {
		d.mu.Lock()
		m, ok := d.queue.pop()
		if !ok {
			d.working = false
			d.mu.Unlock()
			return
		}
		ps, ok := d.subs[m.Subject]
		if ok {
			// A user who came back may see frames queued for their
			// earlier subscription: never below zero.
			ps.pending = max(0, ps.pending-len(m.Data))
		}
		d.mu.Unlock()
		if ok {
			d.deliver(ps.key, m)
		}
	}
}
