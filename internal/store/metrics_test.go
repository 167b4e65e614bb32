package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/purser-ai/purser/internal/store/storetest"
)

// An operator reads from /metrics what the store does: its writes and
// commits as the store counts them, its pools' connections and, on
// SQLite, every write transaction once in the writer's batches and write
// times, and the writer's busy time.
func TestStoreMetrics(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			s := storetest.Open(t, e.DSN(t))
			reg := prometheus.NewRegistry()
			if err := reg.Register(s.Collector()); err != nil {
				t.Fatal(err)
			}
			const writes = 40
			ctx := context.Background()
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range writes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					payload := fmt.Appendf(nil, `{"type":"answer","turn_id":"t%d"}`, i)
					if _, _, err := s.AppendConversationFrame(ctx, "acme", fmt.Sprintf("u%d", i%4), "c", fmt.Sprintf("ev-%d", i), payload, time.Now()); err != nil {
						t.Error(err)
					}
				}()
			}
			close(start)
			wg.Wait()

			got := gather(t, reg)
			statements, commits := s.WriteStats()
			if v := got.value("purser_store_write_statements_total", nil); v != float64(statements) || v < writes {
				t.Errorf("write statements: /metrics %v, the store %d, %d frames written", v, statements, writes)
			}
			if v := got.value("purser_store_commits_total", nil); v != float64(commits) || v < 1 {
				t.Errorf("commits: /metrics %v, the store %d", v, commits)
			}
			pools := []string{"postgres"}
			if e.Name == "sqlite" {
				pools = []string{"writer", "readers"}
			}
			for _, p := range pools {
				open := got.value("purser_store_connections", map[string]string{"pool": p, "state": "idle"}) +
					got.value("purser_store_connections", map[string]string{"pool": p, "state": "in_use"})
				if p != "readers" && open < 1 {
					t.Errorf("pool %s: %v connections open after writing", p, open)
				}
				if _, ok := got.find("purser_store_connection_wait_seconds_total", map[string]string{"pool": p}); !ok {
					t.Errorf("pool %s: no connection wait time", p)
				}
			}
			busy, hasWriter := got.find("purser_store_writer_busy_seconds_total", nil)
			if e.Name == "postgres" {
				if hasWriter {
					t.Error("Postgres reports SQLite's writer")
				}
				// Every frame went through the pipelines, none again.
				pipes, _ := got.find("purser_store_pipeline_statements", nil)
				if h := pipes.GetHistogram(); h.GetSampleSum() != writes || h.GetSampleCount() < 1 {
					t.Errorf("pipelines: %d holding %v statements, want %d statements", h.GetSampleCount(), h.GetSampleSum(), writes)
				}
				if r, ok := got.find("purser_store_pipeline_reruns_total", nil); !ok || r.GetCounter().GetValue() != 0 {
					t.Errorf("pipelines run again: %v, want 0", r)
				}
				return
			}
			// The writer records a batch's size and busy time once it has
			// answered the batch's callers (its log copy comes after): wait
			// for the last batch to be recorded, then check it all.
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if b, ok := got.find("purser_store_writer_batch_transactions", nil); ok && b.GetHistogram().GetSampleSum() >= writes {
					break
				}
				got = gather(t, reg)
			}
			// Once more: one collection reads the busy time before the
			// batches, so the one that saw the last batch may have read
			// the busy time from before it.
			got = gather(t, reg)
			busy, hasWriter = got.find("purser_store_writer_busy_seconds_total", nil)
			if !hasWriter || busy.GetCounter().GetValue() <= 0 {
				t.Errorf("the writer's busy time: %v", busy)
			}
			batches, _ := got.find("purser_store_writer_batch_transactions", nil)
			h := batches.GetHistogram()
			if h.GetSampleSum() != writes || h.GetSampleCount() < 1 || h.GetSampleCount() > writes {
				t.Errorf("batches: %d commits holding %v transactions, want %d transactions", h.GetSampleCount(), h.GetSampleSum(), writes)
			}
			times, _ := got.find("purser_store_write_seconds", nil)
			if n := times.GetHistogram().GetSampleCount(); n != writes {
				t.Errorf("write times: %d observed, want one for each of the %d writes", n, writes)
			}
		})
	}
}

type families map[string]*dto.MetricFamily

func gather(t *testing.T, reg *prometheus.Registry) families {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := families{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// find returns the metric of name whose labels include labels.
func (f families) find(name string, labels map[string]string) (*dto.Metric, bool) {
	mf, ok := f[name]
	if !ok {
		return nil, false
	}
next:
	for _, m := range mf.GetMetric() {
		for k, v := range labels {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m, true
	}
	return nil, false
}

// value is a counter's or gauge's value; -1 when there is no such metric.
func (f families) value(name string, labels map[string]string) float64 {
	m, ok := f.find(name, labels)
	switch {
	case !ok:
		return -1
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	default:
		return m.GetGauge().GetValue()
	}
}
