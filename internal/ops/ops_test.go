package ops

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestReadyzReflectsDependencies(t *testing.T) {
	storeDown := errors.New("dial tcp 10.0.0.1:5432: password=hunter2 refused")
	var storeErr error
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_test_total", Help: "x"})
	reg.MustRegister(c)
	c.Inc()
	mux := http.NewServeMux()
	Routes(mux, reg,
		Check{Name: "nats", Probe: func(context.Context) error { return nil }},
		Check{Name: "store", Probe: func(context.Context) error { return storeErr }},
	)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("healthz = %d", code)
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, `"store":"ok"`) {
		t.Errorf("readyz with all up = %d %s", code, body)
	}
	storeErr = storeDown
	code, body := get("/readyz")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `"store":"unavailable"`) {
		t.Errorf("readyz with store down = %d %s", code, body)
	}
	if strings.Contains(body, "hunter2") {
		t.Errorf("readyz leaks the dependency error: %s", body)
	}
	if code, body := get("/metrics"); code != 200 || !strings.Contains(body, "purser_test_total 1") {
		t.Errorf("metrics = %d, missing series", code)
	}
}

func TestBuildInfo(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(BuildInfo())
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 || mfs[0].GetName() != "purser_build_info" {
		t.Fatalf("gathered %v, %v", mfs, err)
	}
	m := mfs[0].GetMetric()[0]
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	t.Logf("purser_build_info %v", labels)
	if m.GetGauge().GetValue() != 1 || labels["goversion"] == "" || labels["version"] == "" || labels["revision"] == "" {
		t.Fatalf("purser_build_info %v = %v", labels, m.GetGauge().GetValue())
	}
}

func TestMetricsAloneServesNoHealth(t *testing.T) {
	mux := http.NewServeMux()
	MetricsRoutes(mux, prometheus.NewRegistry())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for path, want := range map[string]int{"/metrics": 200, "/healthz": 404} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}
