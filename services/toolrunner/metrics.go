package toolrunner

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the toolrunner's series.
type Metrics struct {
	calls       *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	audits      prometheus.Counter
	inFlight    prometheus.Gauge
}

// NewMetrics registers the toolrunner's series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls:       prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_tool_calls_total", Help: "Tool calls, by tool and outcome (ok or an error code; replayed for stored results)."}, []string{"tool", "outcome"}),
		latency:     prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "purser_tool_call_seconds", Help: "Tool call latency.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"tool"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_tool_rate_limited_total", Help: "Calls refused by the per-user rate limit."}, []string{"tool"}),
		audits:      prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_tool_audit_writes_total", Help: "Audit entries written."}),
		inFlight:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "purser_tool_calls_in_flight", Help: "Tool calls running now."}),
	}
	reg.MustRegister(m.calls, m.latency, m.rateLimited, m.audits, m.inFlight)
	return m
}
