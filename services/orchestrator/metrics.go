package orchestrator

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	turns         *prometheus.CounterVec
	decisions     *prometheus.CounterVec
	proposals     *prometheus.CounterVec
	bounds        *prometheus.CounterVec
	modelSeconds  prometheus.Histogram
	steps         prometheus.Histogram
	modelInFlight prometheus.Gauge
	turnSeconds   *prometheus.HistogramVec
	firstToken    prometheus.Histogram
	// decisionRetries counts a model decision applied again after a
	// failure that may pass.
	decisionRetries prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		turns:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_orchestrator_events_total", Help: "Turn and tool-result events applied, by outcome."}, []string{"outcome"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_orchestrator_decisions_total", Help: "Model decisions, by kind."}, []string{"kind"}),
		proposals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_orchestrator_proposals_total", Help: "Proposal status changes, by new status."}, []string{"status"}),
		bounds:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_orchestrator_turn_errors_total", Help: "Turns ended with an error, by code (bounds hit, model errors)."}, []string{"code"}),
		modelSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "purser_orchestrator_model_seconds", Help: "Model decision latency.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}),
	}
	m.steps = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "purser_orchestrator_steps_per_turn", Help: "Tool steps a turn used, observed when it ends.",
		Buckets: []float64{0, 1, 2, 3, 4, 5}})
	m.modelInFlight = prometheus.NewGauge(prometheus.GaugeOpts{Name: "purser_orchestrator_model_calls_in_flight",
		Help: "Model calls started and not finished, queued for a slot included."})
	m.turnSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "purser_turn_seconds",
		Help:    "Time from a turn's start to the frame that ends it (answer, question, proposal or error), by outcome.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12)}, []string{"outcome"})
	m.firstToken = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "purser_turn_first_token_seconds",
		Help:    "Time from a turn's start to the first streamed token of its answer.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12)})
	m.decisionRetries = prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_orchestrator_decision_retries_total",
		Help: "Model decisions applied again after a failure that may pass (the store briefly unavailable, say)."})
	reg.MustRegister(m.turns, m.decisions, m.proposals, m.bounds, m.modelSeconds, m.steps, m.modelInFlight, m.turnSeconds, m.firstToken,
		m.decisionRetries)
	return m
}
