package ingress

import (
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go"
	"golang.org/x/time/rate"

	"github.com/purser-ai/purser/internal/bus"
)

// hub tracks every open socket by user and holds one core NATS
// subscription per user with at least one socket on this replica.
type hub struct {
	nc      *nats.Conn
	cfg     Config
	log     *slog.Logger
	metrics *metrics

	mu    sync.Mutex
	users map[userKey]*userConns
}

type userKey struct{ tenant, user string }

type userConns struct {
	conns   map[*client]struct{}
	sub     *nats.Subscription
	limiter *rate.Limiter
}

func newHub(nc *nats.Conn, cfg Config, log *slog.Logger, m *metrics) *hub {
	return &hub{nc: nc, cfg: cfg, log: log, metrics: m, users: map[userKey]*userConns{}}
}

// add registers c and subscribes to the user's deliver subject if c is
// the user's first socket here. It returns the user's shared rate limiter.
func (h *hub) add(c *client) (*rate.Limiter, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := userKey{c.tenant, c.user}
	uc, ok := h.users[k]
	if !ok {
		subject, err := bus.DeliverSubject(c.tenant, c.user)
		if err != nil {
			return nil, err
		}
		uc = &userConns{conns: map[*client]struct{}{}, limiter: rate.NewLimiter(rate.Limit(h.cfg.RatePerSecond), h.cfg.Burst)}
		sub, err := h.nc.Subscribe(subject, func(m *nats.Msg) { h.fanOut(k, m.Data) })
		if err != nil {
			return nil, err
		}
		uc.sub = sub
		h.users[k] = uc
	}
	uc.conns[c] = struct{}{}
	h.metrics.connections.Inc()
	return uc.limiter, nil
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
	if _, ok := uc.conns[c]; !ok {
		return
	}
	delete(uc.conns, c)
	h.metrics.connections.Dec()
	if len(uc.conns) == 0 {
		_ = uc.sub.Unsubscribe()
		delete(h.users, k)
	}
}

// fanOut queues one frame for every socket of the user.
func (h *hub) fanOut(k userKey, frame []byte) {
	h.mu.Lock()
	uc, ok := h.users[k]
	var targets []*client
	if ok {
		targets = make([]*client, 0, len(uc.conns))
		for c := range uc.conns {
			targets = append(targets, c)
		}
	}
	h.mu.Unlock()
	for _, c := range targets {
		c.enqueue(frame)
	}
}

// closeAll closes every socket; their handlers remove them.
func (h *hub) closeAll() {
	h.mu.Lock()
	var all []*client
	for _, uc := range h.users {
		for c := range uc.conns {
			all = append(all, c)
		}
	}
	h.mu.Unlock()
	for _, c := range all {
		c.shutdown()
	}
}
