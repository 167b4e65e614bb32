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
	info := startUp(t, func(c *config.Config) { c.MetricsAddr = "127.0.0.1:0" })
	if info.MetricsAddr == info.HTTPAddr {
		t.Fatal("metrics share the HTTP address")
	}
	code, body := get(t, "http://"+info.MetricsAddr+"/metrics")
	if code != 200 || !strings.Contains(body, "purser_build_info{") || !strings.Contains(body, "purser_ingress_connections") {
		t.Fatalf("metrics listener: %d, build info or ingress series missing", code)
	}
	if code, _ := get(t, "http://"+info.HTTPAddr+"/metrics"); code != http.StatusNotFound {
		t.Errorf("the public port serves /metrics: %d", code)
	}
	if code, _ := get(t, "http://"+info.HTTPAddr+"/healthz"); code != 200 {
		t.Errorf("healthz moved: %d", code)
	}
}
