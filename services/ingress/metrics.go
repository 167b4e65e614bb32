package ingress

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	connections  prometheus.Gauge
	framesIn     *prometheus.CounterVec
	framesOut    *prometheus.CounterVec
	authFailures *prometheus.CounterVec
	rateLimited  prometheus.Counter
	queueDrops   prometheus.Counter
	turns        prometheus.Counter
}

// Metrics are the ingress's Prometheus series, registered once per registry.
type Metrics struct{ m *metrics }

// NewMetrics registers the ingress series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &metrics{
		connections:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "purser_ingress_connections", Help: "Open websocket connections."}),
		framesIn:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_ingress_frames_in_total", Help: "Client frames received, by type."}, []string{"type"}),
		framesOut:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_ingress_frames_out_total", Help: "Frames sent to clients, by type."}, []string{"type"}),
		authFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_ingress_auth_failures_total", Help: "Refused authentications, by reason."}, []string{"reason"}),
		rateLimited:  prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_ingress_rate_limited_total", Help: "Client frames refused by the per-user rate limit."}),
		queueDrops:   prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_ingress_send_queue_drops_total", Help: "Sockets closed because their send queue was full."}),
		turns:        prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_ingress_turns_published_total", Help: "UserTurns published to TURNS."}),
	}
	reg.MustRegister(m.connections, m.framesIn, m.framesOut, m.authFailures, m.rateLimited, m.queueDrops, m.turns)
	return &Metrics{m: m}
}
