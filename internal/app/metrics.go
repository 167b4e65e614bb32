package app

import (
	"fmt"
	"net"

	"github.com/purser-ai/purser/internal/config"
)

// listenMetrics opens PURSER_METRICS_ADDR, /metrics's own listener; nil
// when it is not set (then /metrics is on the HTTP address).
func listenMetrics(cfg config.Config) (net.Listener, error) {
	if cfg.MetricsAddr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("PURSER_METRICS_ADDR %s: %w", cfg.MetricsAddr, err)
	}
	return ln, nil
}
