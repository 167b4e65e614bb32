package bench_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/purser-ai/purser/internal/bench"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// After a run the bench says what the store did meanwhile, read from the
// /metrics of the purser it measured: here a SQLite store's, serving its
// real series, written to between the two samples.
// reportThirtyWrites writes 30 frames at once into a store on dsn and
// returns what ReportStore says of them, from the store's /metrics, and
// the seconds the report covers. counted is the series that counts the
// writes once they are recorded: sampling waits for it.
func reportThirtyWrites(t *testing.T, dsn, counted string) (string, float64) {
	t.Helper()
	ctx := context.Background()
	st := storetest.Open(t, dsn)
	reg := prometheus.NewRegistry()
	reg.MustRegister(st.Collector())
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	from, err := bench.SampleStore(ctx, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := st.AppendFrame(ctx, "acme", fmt.Sprintf("u%d", i%3), fmt.Sprintf("ev%d", i), []byte(`{"type":"answer"}`), time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	time.Sleep(10 * time.Millisecond) // a window of some length
	// SQLite's writer records a batch once it has answered its callers:
	// sample until the last batch is in (or give up and let the checks
	// fail).
	var to bench.StoreSample
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if to, err = bench.SampleStore(ctx, srv.URL); err != nil {
			t.Fatal(err)
		}
		if to.Series[counted]-from.Series[counted] >= 30 || time.Now().After(deadline) {
			break
		}
	}
	var out strings.Builder
	bench.ReportStore(&out, from, to)
	return out.String(), to.At.Sub(from.At).Seconds()
}

// perWindow reads the figure a second that re finds in report, times
// secs: how many the report says happened.
func perWindow(t *testing.T, report string, re *regexp.Regexp, secs float64) float64 {
	t.Helper()
	m := re.FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no %s in:\n%s", re, report)
	}
	var perSecond float64
	fmt.Sscan(m[1], &perSecond)
	return perSecond * secs
}

func TestReportStoreFromMetrics(t *testing.T) {
	report, secs := reportThirtyWrites(t, storetest.SQLiteDSN(t), "purser_store_writer_batch_transactions_sum")
	if got := perWindow(t, report, regexp.MustCompile(`(\d+) write transactions/s in \d+ commits/s`), secs); got < 25 || got > 35 {
		t.Errorf("the report's write transactions over %.3fs are %.0f, want the 30 written:\n%s", secs, got, report)
	}
	for _, want := range []string{"writer busy ", "from queued to committed"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// Each of SQLite's pools is named on the line of connection waits.
	_, waits, _ := strings.Cut(report, "statements waiting for a connection: ")
	if !regexp.MustCompile(`^readers .*; writer `).MatchString(waits) {
		t.Errorf("the waits line does not name the readers and the writer:\n%s", report)
	}
}

// On Postgres the report says how many statements its pipelines carried,
// and that none of the 30 ran again one by one.
func TestReportStoreFromMetricsOnPostgres(t *testing.T) {
	report, secs := reportThirtyWrites(t, storetest.PostgresDSN(t), "purser_store_pipeline_statements_sum")
	if got := perWindow(t, report, regexp.MustCompile(`(\d+) statements/s in \d+ pipelines/s`), secs); got < 25 || got > 35 {
		t.Errorf("the report's pipelined statements over %.3fs are %.0f, want the 30 written:\n%s", secs, got, report)
	}
	if !strings.Contains(report, "; 0 run again statement by statement") {
		t.Errorf("the report does not say that no pipeline ran again:\n%s", report)
	}
	if strings.Contains(report, "writer busy") {
		t.Errorf("Postgres reported as SQLite's writer:\n%s", report)
	}
}
