package llm

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
)

// libraryTools is the "tools" field go-openai itself sends for p's
// catalog, decoded.
func libraryTools(t *testing.T, p orchestrator.Prompt) any {
	t.Helper()
	b, err := json.Marshal(openai.ChatCompletionRequest{Model: "m", Tools: toolDefs(p)})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		t.Fatal(err)
	}
	return body["tools"]
}

// The model server gets the catalog the adapter encoded once, equal to
// what go-openai would have sent itself, on every call and on a retry;
// a call with another catalog gets that one.
func TestTheServerGetsTheCatalogGoOpenAIWouldSend(t *testing.T) {
	srv := llmtest.New(t)
	m, err := New(Config{APIKey: "sk-test", BaseURL: srv.URL, Model: "test-model", Protocol: ProtocolTools,
		Timeout: 20 * time.Second, MaxRetries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	full := orchestrator.Prompt{TurnID: "t1", Text: "what did I spend?", Now: time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC),
		Timezone: "Europe/London", Currency: "GBP", Tools: contracts.Tools()}
	few := full
	few.Tools = contracts.Tools()[:3]

	srv.Push(llmtest.Text("first"), llmtest.Error(503, "", "busy"), llmtest.Text("after a retry"), llmtest.Text("fewer tools"))
	for _, p := range []orchestrator.Prompt{full, full, few} {
		if _, err := m.Decide(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4 (one retried)", len(reqs))
	}
	want := []orchestrator.Prompt{full, full, full, few}
	for i, r := range reqs {
		if got, exp := r.Body["tools"], libraryTools(t, want[i]); !reflect.DeepEqual(got, exp) {
			g, _ := json.Marshal(got)
			e, _ := json.Marshal(exp)
			t.Errorf("request %d: tools differ from go-openai's own encoding:\ngot  %.200s\nwant %.200s", i, g, e)
		}
		if r.Body["stream"] != true || r.Body["model"] != "test-model" || r.Body["messages"] == nil {
			t.Errorf("request %d lost the rest of its body: %v", i, r.Body)
		}
	}
	if n := len(reqs[3].Body["tools"].([]any)); n != 3+2 { // the three, make_plan, ask_clarification
		t.Errorf("the smaller catalog sent %d tools, want 5", n)
	}
}

// A catalog is encoded once: the second call gets the same bytes.
func TestACatalogIsEncodedOnce(t *testing.T) {
	p := orchestrator.Prompt{Tools: contracts.Tools()}
	a, err := encodeTools(toolDefs(p))
	if err != nil {
		t.Fatal(err)
	}
	b, err := encodeTools(toolDefs(p))
	if err != nil {
		t.Fatal(err)
	}
	if len(a) == 0 || &a[0] != &b[0] {
		t.Fatal("the catalog was encoded again")
	}
	p.Tools = p.Tools[1:]
	c, err := encodeTools(toolDefs(p))
	if err != nil {
		t.Fatal(err)
	}
	if string(c) == string(a) {
		t.Fatal("a different catalog got the first one's bytes")
	}
}

func TestSpliceField(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{}`, `{"tools":[1]}`},
		{`{"model":"m"}`, `{"model":"m","tools":[1]}`},
		{"{\"model\":\"m\"}\n", `{"model":"m","tools":[1]}`},
		{`{ }`, `{ "tools":[1]}`},
	} {
		got, err := spliceField([]byte(tc.in), "tools", []byte(`[1]`))
		if err != nil || string(got) != tc.want {
			t.Errorf("spliceField(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{"a":1`} {
		if _, err := spliceField([]byte(bad), "tools", []byte(`[1]`)); !errors.Is(err, errBodyShape) {
			t.Errorf("spliceField(%q): err %v, want errBodyShape", bad, err)
		}
	}
}

// BenchmarkRequestBody compares building a call's body with the full
// catalog as go-openai encodes it (the tools in the request) with the
// adapter's way (the request without tools, the catalog encoded once and
// put in), in the same run.
func BenchmarkRequestBody(b *testing.B) {
	p := orchestrator.Prompt{Text: "what did I spend?", Tools: contracts.Tools()}
	msgs := toolMessages(p)
	b.Run("go-openai", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			req := openai.ChatCompletionRequest{Model: "m", Messages: msgs, Tools: toolDefs(p), Stream: true}
			if _, err := json.Marshal(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoded-once", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			tools, err := encodeTools(toolDefs(p))
			if err != nil {
				b.Fatal(err)
			}
			body, err := json.Marshal(openai.ChatCompletionRequest{Model: "m", Messages: msgs, Stream: true})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := spliceField(body, "tools", tools); err != nil {
				b.Fatal(err)
			}
		}
	})
}
