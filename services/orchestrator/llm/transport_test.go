package llm

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
)

// Calls in flight together keep their connections to the model server
// for the next calls: eight at once, twice, open eight connections, not
// the fourteen that Go's default of two idle a host gives.
func TestConcurrentCallsReuseTheirConnections(t *testing.T) {
	const calls = 8
	var mu sync.Mutex
	opened, arrived := 0, 0
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		arrived++
		last := arrived%calls == 0 // the round's calls are all in flight now
		wait := release
		if last {
			close(release)
			release = make(chan struct{})
		}
		mu.Unlock()
		<-wait
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range llmtest.Text("ok").Chunks {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			opened++
			mu.Unlock()
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	m, err := New(Config{APIKey: "sk-test", BaseURL: srv.URL + "/v1", Model: "test-model", Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	p := orchestrator.Prompt{TurnID: "t1", Text: "hi", Now: time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC), Tools: contracts.Tools()}
	for range 2 {
		var wg sync.WaitGroup
		errs := make(chan error, calls)
		for range calls {
			wg.Go(func() {
				if _, err := m.Decide(context.Background(), p); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if opened != calls {
		t.Fatalf("%d connections opened for two rounds of %d calls at once, want %d", opened, calls, calls)
	}
}
