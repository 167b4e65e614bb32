package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// trivial is a read tool that does no work, so the benchmark measures the
// platform: decode, validate, role and rate checks, the stored result,
// audit, publish, and the bus both ways.
var trivial = toolrunner.Tool{Name: contracts.ToolGetRecentImports, Kind: contracts.KindRead, Deadline: 5 * time.Second,
	OutputCap: 64 << 10, Run: func(context.Context, toolrunner.Tx, toolrunner.Call) (toolrunner.Output, error) {
		return toolrunner.Output{Data: map[string]int{"n": 1}}, nil
	}}

func reportPercentiles(b *testing.B, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkToolCall compares one call of the trivial tool through the
// toolrunner (request on TOOLS → runner → result on TOOLS, SQLite store)
// with calling its function directly, in the same run. The difference of
// the p50/p99 figures is what the platform adds.
func BenchmarkToolCall(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		call := toolrunner.Call{ID: "c", Args: &contracts.GetRecentImportsArgs{}, Now: time.Now()}
		lat := make([]time.Duration, 0, b.N)
		for range b.N {
			start := time.Now()
			out, err := trivial.Run(context.Background(), nil, call)
			if _, jerr := json.Marshal(out.Data); err != nil || jerr != nil {
				b.Fatal(err, jerr)
			}
			lat = append(lat, time.Since(start))
		}
		reportPercentiles(b, lat)
	})
	b.Run("through-toolrunner", func(b *testing.B) {
		s := systest.Start(b, systest.Options{DSN: storetest.SQLiteDSN(b), Toolrunners: 1, Tools: []toolrunner.Tool{trivial}})
		results := make(chan struct{}, 1)
		sub, err := s.NC.Subscribe("purser.tool.result.bench.>", func(*nats.Msg) { results <- struct{}{} })
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Unsubscribe()
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			req := contracts.ToolRequest{CallID: fmt.Sprintf("b%d", i), TurnID: "t", TenantID: "bench", UserID: "u", Roles: []string{"member"},
				ConversationID: "c", Tool: trivial.Name, Args: json.RawMessage(`{}`), Deadline: time.Now().Add(time.Hour)}
			start := time.Now()
			s.SendToolRequest(req)
			<-results
			lat = append(lat, time.Since(start))
		}
		b.StopTimer()
		reportPercentiles(b, lat)
	})
	b.Run("throughput-3-replicas", func(b *testing.B) {
		s := systest.Start(b, systest.Options{DSN: storetest.SQLiteDSN(b), Toolrunners: 3, Tools: []toolrunner.Tool{trivial}})
		var wg sync.WaitGroup
		wg.Add(b.N)
		sub, err := s.NC.Subscribe("purser.tool.result.bench.>", func(*nats.Msg) { wg.Done() })
		if err != nil {
			b.Fatal(err)
		}
		defer sub.Unsubscribe()
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			s.SendToolRequest(contracts.ToolRequest{CallID: fmt.Sprintf("t%d", i), TurnID: "t", TenantID: "bench", UserID: fmt.Sprintf("u%d", i%50),
				Roles: []string{"member"}, ConversationID: "c", Tool: trivial.Name, Args: json.RawMessage(`{}`), Deadline: time.Now().Add(time.Hour)})
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	})
}
