package ingress

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	connections      prometheus.Gauge
	framesIn         *prometheus.CounterVec
	framesOut        *prometheus.CounterVec
	authFailures     *prometheus.CounterVec
	rateLimited      prometheus.Counter
	queueDrops       prometheus.Counter
	turns            prometheus.Counter
	deliveryLag      prometheus.Histogram
	replayed         prometheus.Counter
	gapFills         prometheus.Counter
	notifierRequests *prometheus.CounterVec
	httpRequests     *prometheus.CounterVec
	httpSeconds      *prometheus.HistogramVec
}

// Metrics are the ingress's Prometheus series, registered once per registry.
type Metrics struct{ m *metrics }

// NewMetrics registers the ingress series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &metrics{
		connections:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "purser_ingress_connections", Help: "Open websocket connections."}),
		framesIn:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_ingress_frames_in_total", Help: "Client frames received, by type."}, []string{"type"}),
		framesOut:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_ingress_frames_out_total", Help: "Frames written to clients (sockets and server-sent events), by type."}, []string{"type"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_ingress_auth_failures_total", Help: "Refused authentications, by reason."}, []string{"reason"}),
		rateLimited:  prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_ingress_rate_limited_total", Help: "Client frames and requests refused by the per-user rate limit."}),
		queueDrops:   prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_ingress_send_queue_drops_total", Help: "Sockets closed because their send queue was full."}),
		turns:        prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_ingress_turns_published_total", Help: "UserTurns published to TURNS."}),
		deliveryLag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "purser_ingress_delivery_lag_seconds",
			Help:    "Time from an event's creation (Purser-Created-At) to its frame's write to a client.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 9)}),
		replayed: prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_ingress_replayed_frames_total", Help: "Stored frames sent to clients that resumed."}),
		gapFills: prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_ingress_gap_fills_total", Help: "Catch-ups from the store because live frames went missing (a gap in seq, or a NATS reconnect)."}),
		notifierRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_ingress_notifier_requests_total",
			Help: "Requests to the notifier (catch-up, inbox), by op and outcome."}, []string{"op", "outcome"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_ingress_http_requests_total",
			Help: "HTTP API requests answered, by route and status code."}, []string{"route", "code"}),
		httpSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "purser_ingress_http_request_seconds",
			Help:    "Time to answer an HTTP API request (for POST /v1/chat, the whole turn), by route.",
			Buckets: prometheus.ExponentialBuckets(0.001, 3, 12)}, []string{"route"}),
	}
	reg.MustRegister(m.connections, m.framesIn, m.framesOut, m.authFailures, m.rateLimited, m.queueDrops, m.turns,
		m.deliveryLag, m.replayed, m.gapFills, m.notifierRequests, m.httpRequests, m.httpSeconds)
	return &Metrics{m: m}
}

// wrote counts a frame written to a client at now.
func (m *metrics) wrote(f *outFrame, now time.Time) {
	m.framesOut.WithLabelValues(f.typ).Inc()
	if !f.created.IsZero() {
		m.deliveryLag.Observe(now.Sub(f.created).Seconds())
	}
}
