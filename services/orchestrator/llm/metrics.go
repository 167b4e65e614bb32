package llm

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/services/orchestrator"
)

type metrics struct {
	tokens   *prometheus.CounterVec
	requests *prometheus.CounterVec
	latency  prometheus.Histogram
	retries  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_model_tokens_total",
			Help: "Model tokens used, by kind (prompt, completion). Per-tenant use is logged at debug, not labelled: a label must not grow with tenants."}, []string{"kind"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_model_requests_total",
			Help: "Model calls by outcome (ok, invalid, error)."}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "purser_model_call_seconds",
			Help: "Model call duration, retries included.", Buckets: prometheus.ExponentialBuckets(0.05, 2, 10)}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_model_retries_total", Help: "Retried model requests (429, 5xx)."}),
	}
	if reg != nil {
		reg.MustRegister(m.tokens, m.requests, m.latency, m.retries)
	}
	return m
}

func (m *metrics) observe(start time.Time, err error) {
	m.latency.Observe(time.Since(start).Seconds())
	switch {
	case err == nil:
		m.requests.WithLabelValues("ok").Inc()
	case errors.Is(err, orchestrator.ErrInvalidOutput):
		m.requests.WithLabelValues("invalid").Inc()
	default:
		m.requests.WithLabelValues("error").Inc()
	}
}

func (m *metrics) usage(prompt, completion int) {
	if prompt > 0 {
		m.tokens.WithLabelValues("prompt").Add(float64(prompt))
	}
	if completion > 0 {
		m.tokens.WithLabelValues("completion").Add(float64(completion))
	}
}
