package ingress

import (
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"golang.org/x/time/rate"

	"github.com/purser-ai/purser/internal/bus"
)

// hub tracks every open socket by user and holds one core NATS
// subscription per user with at least one socket on this replica.
type hub struct {
	nc      *nats.Conn
	deliver *dispatcher
	log     *slog.Logger
	metrics *metrics

	mu    sync.Mutex
	users map[userKey]*userConns
	// closing refuses new sockets once shutdown began.
	closing bool
}

type userKey struct{ tenant, user string }

type userConns struct {
	conns   []*client // at most MaxSocketsPerUser: a slice is smaller than a map
	sub     *nats.Subscription
	subject string
}

// userPendingLimit is how many bytes of one user's frames may wait for
// the hub before new ones are dropped: far more than any user's turns
// make, so that the per-socket queues decide who is too slow.
const userPendingLimit = 64 << 20

func newHub(nc *nats.Conn, log *slog.Logger, m *metrics) *hub {
	h := &hub{nc: nc, log: log, metrics: m, users: map[userKey]*userConns{}}
	h.deliver = newDispatcher(userPendingLimit, func(k userKey, m *nats.Msg) {
		h.fanOut(k, newOutFrame(m.Data, m.Header.Get(bus.HeaderCreatedAt)))
	}, h.refillUser)
	return h
}

// errTooManySockets refuses a socket past the user's cap.
var errTooManySockets = errors.New("too many open sockets for this user")

// errClosing refuses a socket that opens while the ingress shuts down.
var errClosing = errors.New("shutting down")

// sockets is how many sockets the user has open here.
func (h *hub) sockets(k userKey) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if uc, ok := h.users[k]; ok {
		return len(uc.conns)
	}
	return 0
}

// add registers c, unless the user already has max sockets here, and
// subscribes to the user's deliver subject if c is their first.
func (h *hub) add(c *client, max int) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return errClosing
	}
	k := userKey{c.tenant, c.user}
	uc, ok := h.users[k]
	if ok && len(uc.conns) >= max {
		return errTooManySockets
	}
	if !ok {
		subject, err := bus.DeliverSubject(c.tenant, c.user)
		if err != nil {
			return err
		}
		sub, err := h.deliver.subscribe(h.nc, subject, k)
		if err != nil {
			return err
		}
		uc = &userConns{sub: sub, subject: subject}
		h.users[k] = uc
	}
	uc.conns = append(uc.conns, c)
	h.metrics.connections.Inc()
	return nil
}

// remove forgets c and drops the subscription with the user's last socket.
func (h *hub) remove(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := userKey{c.tenant, c.user}
	uc, ok := h.users[k]
	if !ok {
		return
	}
	i := slices.Index(uc.conns, c)
	if i < 0 {
		return
	}
	uc.conns = slices.Delete(uc.conns, i, i+1)
	h.metrics.connections.Dec()
	if len(uc.conns) == 0 {
		h.deliver.unsubscribe(uc.sub, uc.subject)
		delete(h.users, k)
	}
}

// fanOut hands one frame to every socket of the user.
func (h *hub) fanOut(k userKey, f *outFrame) {
	h.mu.Lock()
	uc, ok := h.users[k]
	var targets []*client
	if ok {
		targets = slices.Clone(uc.conns)
	}
	h.mu.Unlock()
	for _, c := range targets {
		c.deliver(f)
	}
}

// refillUser has the user's sockets catch up from the last frame each was
// sent: live frames of theirs were dropped on the way.
func (h *hub) refillUser(k userKey) {
	h.log.Warn("live frames dropped; the user's sockets catch up from the store", "tenant", k.tenant, "user", k.user)
	h.mu.Lock()
	var targets []*client
	if uc, ok := h.users[k]; ok {
		targets = slices.Clone(uc.conns)
	}
	h.mu.Unlock()
	for _, c := range targets {
		c.refill()
	}
}

// refillAll has every socket catch up from the last frame it was sent.
func (h *hub) refillAll() {
	for _, c := range h.all() {
		c.refill()
	}
}

// closeAll closes every socket, and refuses new ones from now on; their
// handlers remove them.
func (h *hub) closeAll() {
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	for _, c := range h.all() {
		c.shutdown()
	}
}

// empty reports whether no socket is open.
func (h *hub) empty() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.users) == 0
}

// all is every open socket, at the moment of asking.
func (h *hub) all() []*client {
	h.mu.Lock()
	defer h.mu.Unlock()
	var all []*client
	for _, uc := range h.users {
		for _, c := range uc.conns {
			all = append(all, c)
		}
	}
	return all
}

// outFrame is one encoded server frame on its way to sockets, read once
// for what routing needs. It is shared by every socket and never changed.
type outFrame struct {
	data    []byte
	typ     string
	seq     int64
	turnID  string
	created time.Time // the event's creation, zero when unknown
	// again marks a frame sent once more on purpose (the outcome of a
	// repeated turn, for a client that asked again): no seq check drops it.
	again bool
	// ready, when set, closes once data is final (a socket's own reply
	// that holds its place in the queue; nil data then means nothing to
	// write). Such a frame belongs to one socket only.
	ready chan struct{}
}

func newOutFrame(data []byte, createdAt string) *outFrame {
	var head struct {
		Type   string `json:"type"`
		Seq    int64  `json:"seq"`
		TurnID string `json:"turn_id"`
	}
	f := &outFrame{data: data, typ: "unknown"}
	if json.Unmarshal(data, &head) == nil && head.Type != "" {
		f.typ, f.seq, f.turnID = head.Type, head.Seq, head.TurnID
	}
	if createdAt != "" {
		if t, err := time.Parse(time.RFC3339Nano, createdAt); err == nil {
			f.created = t
		}
	}
	return f
}

// limits are the per-user input rate limits, shared by a user's sockets
// and HTTP requests on this replica.
type limits struct {
	rate  rate.Limit
	burst int

	mu      sync.Mutex
	m       map[userKey]*rate.Limiter
	sweepAt int
}

func newLimits(perSecond float64, burst int) *limits {
	return &limits{rate: rate.Limit(perSecond), burst: burst, m: map[userKey]*rate.Limiter{}, sweepAt: 1024}
}

// allow takes one token from the user's bucket at now.
func (l *limits) allow(k userKey, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.m[k]
	if !ok {
		if len(l.m) >= l.sweepAt {
			l.sweep(now)
		}
		lim = rate.NewLimiter(l.rate, l.burst)
		l.m[k] = lim
	}
	return lim.AllowN(now, 1)
}

// sweep forgets full buckets: they are the same as new ones. It runs when
// the map has doubled since the last sweep, so its cost is amortized.
func (l *limits) sweep(now time.Time) {
	for k, lim := range l.m {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.m, k)
		}
	}
	l.sweepAt = max(1024, 2*len(l.m))
}
