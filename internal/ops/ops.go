// Package ops serves the operational endpoints every purser process has:
// /healthz (the process is up), /readyz (its dependencies answer) and
// /metrics (Prometheus).
package ops

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Check is one readiness probe: it returns nil when the dependency answers.
type Check struct {
	Name  string
	Probe func(ctx context.Context) error
}

// Routes registers /healthz, /readyz and /metrics on mux.
func Routes(mux *http.ServeMux, gatherer prometheus.Gatherer, checks ...Check) {
	HealthRoutes(mux, checks...)
	MetricsRoutes(mux, gatherer)
}

// MetricsRoutes registers /metrics alone, for a listener of its own
// (PURSER_METRICS_ADDR) that the public port does not share.
func MetricsRoutes(mux *http.ServeMux, gatherer prometheus.Gatherer) {
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
}

// HealthRoutes registers /healthz and /readyz.
func HealthRoutes(mux *http.ServeMux, checks ...Check) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		status := http.StatusOK
		result := make(map[string]string, len(checks))
		for _, c := range checks {
			if err := c.Probe(ctx); err != nil {
				// The reason stays in the logs of the dependency's client;
				// the probe says only which dependency is down.
				result[c.Name] = "unavailable"
				status = http.StatusServiceUnavailable
				continue
			}
			result[c.Name] = "ok"
		}
		writeJSON(w, status, result)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
