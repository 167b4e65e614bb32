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
func TestReportStoreFromMetrics(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLiteDSN(t))
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
	// The writer records a batch once it has answered its callers: sample
	// until the last batch is in (or give up and let the checks fail).
	const batched = "purser_store_writer_batch_transactions_sum"
	var to bench.StoreSample
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if to, err = bench.SampleStore(ctx, srv.URL); err != nil {
			t.Fatal(err)
		}
		if to.Series[batched]-from.Series[batched] >= 30 || time.Now().After(deadline) {
			break
		}
	}
	var out strings.Builder
	bench.ReportStore(&out, from, to)
	report := out.String()
	secs := to.At.Sub(from.At).Seconds()
	txs := regexp.MustCompile(`(\d+) write transactions/s in (\d+) commits/s`).FindStringSubmatch(report)
	if txs == nil {
		t.Fatalf("no writer line in:\n%s", report)
	}
	var perSecond float64
	fmt.Sscan(txs[1], &perSecond)
	if got := perSecond * secs; got < 25 || got > 35 {
		t.Errorf("%s write transactions/s over %.3fs is %.0f transactions, want the 30 written:\n%s", txs[1], secs, got, report)
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
