package app

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/purser-ai/purser/internal/config"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// With PURSER_METRICS_ADDR, /metrics is there and only there: the public
// port answers 404.
func TestMetricsOnAListenerOfTheirOwn(t *testing.T) {
	t.Parallel()
	info := startUp(t, func(c *config.Config) { c.MetricsAddr = "127.0.0.1:0" })
	if info.MetricsAddr == info.HTTPAddr {
		t.Fatal("metrics share the HTTP address")
	}
	code, body := get(t, "http://"+info.MetricsAddr+"/metrics")
	for _, want := range []string{"purser_build_info{", "purser_ingress_connections", `purser_bus_stream_messages{stream="DLQ"} 0`,
		`purser_bus_consumer_pending{consumer="notifier-agent",stream="AGENT"} 0`, `purser_bus_consumer_pending{consumer="orchestrator-turns-0",stream="TURNS"} 0`,
		`purser_bus_consumer_pending{consumer="toolrunner-add_expense",stream="TOOLS"}`} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("metrics listener (%d) lacks %s", code, want)
		}
	}
	if code, _ := get(t, "http://"+info.HTTPAddr+"/metrics"); code != http.StatusNotFound {
		t.Errorf("the public port serves /metrics: %d", code)
	}
	if code, _ := get(t, "http://"+info.HTTPAddr+"/healthz"); code != 200 {
		t.Errorf("healthz moved: %d", code)
	}
}
