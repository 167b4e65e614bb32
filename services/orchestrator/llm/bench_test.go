package llm_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/services/orchestrator"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
)

const benchTokens = 50

func benchReply() llmtest.Reply {
	pieces := make([]string, benchTokens)
	for i := range pieces {
		pieces[i] = "tok "
	}
	return llmtest.Text(pieces...)
}

// BenchmarkStream compares reading one streamed answer of 50 tokens from
// the local test server through the adapter (go-openai, assembly, the
// token sink) with reading the same stream with a bare net/http client,
// in the same run. first-token-µs is the time to the first content token,
// per-token-ns the time per token after it.
func BenchmarkStream(b *testing.B) {
	b.Run("bare-http", func(b *testing.B) {
		srv := llmtest.New(b)
		body := []byte(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		var first, rest time.Duration
		for range b.N {
			srv.Push(benchReply())
			start := time.Now()
			resp, err := http.Post(srv.URL+"/chat/completions", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			var firstAt time.Time
			n := 0
			for sc.Scan() {
				line := sc.Text()
				if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"content":"tok `) {
					if n == 0 {
						firstAt = time.Now()
					}
					n++
				}
			}
			resp.Body.Close()
			if n != benchTokens {
				b.Fatalf("read %d tokens", n)
			}
			first += firstAt.Sub(start)
			rest += time.Since(firstAt)
		}
		report(b, first, rest)
	})
	b.Run("adapter", func(b *testing.B) {
		srv := llmtest.New(b)
		m, _ := newModel(b, srv, nil)
		var first, rest time.Duration
		for range b.N {
			srv.Push(benchReply())
			var firstAt time.Time
			n := 0
			ctx := orchestrator.WithTokenSink(context.Background(), func(string) {
				if n == 0 {
					firstAt = time.Now()
				}
				n++
			})
			start := time.Now()
			if _, err := m.Decide(ctx, prompt("hi")); err != nil {
				b.Fatal(err)
			}
			if n != benchTokens {
				b.Fatalf("sink got %d tokens", n)
			}
			first += firstAt.Sub(start)
			rest += time.Since(firstAt)
		}
		report(b, first, rest)
	})
}

func report(b *testing.B, first, rest time.Duration) {
	b.ReportMetric(float64(first.Microseconds())/float64(b.N), "first-token-µs")
	b.ReportMetric(float64(rest.Nanoseconds())/float64(b.N*(benchTokens-1)), "per-token-ns")
}
