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
