package bench_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bench"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
	"github.com/purser-ai/purser/services/orchestrator/llm"
)

func orchestratorPrompt(text string) orchestrator.Prompt {
	return orchestrator.Prompt{TurnID: "t1", Text: text, Now: time.Now(), Timezone: "UTC", Tools: contracts.Tools()}
}

// The load driver runs every kind of turn through the baseline pipeline
// and counts each as served: a read, an add and its approval, a
// clarification.
func TestRunAgainstTheBaseline(t *testing.T) {
	b, ctx := baselineFor(t)
	res, err := bench.Run(ctx, bench.Options{URL: b.URL, Token: func(int) string { return "" }, Users: 3,
		Duration: 200 * time.Millisecond, Label: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Turns < 4 || len(res.E2E) != res.Turns || len(res.FirstByte) != res.Turns {
		t.Fatalf("result %+v (errors %v), want every kind of turn served without error", res, res.ErrorText)
	}
	// The CPU the run took is reported: the baseline ran in this process.
	if res.CPU <= 0 {
		t.Fatalf("CPU = %v for %d turns", res.CPU, res.Turns)
	}
	var out strings.Builder
	bench.Report(&out, "baseline", res)
	if !strings.Contains(out.String(), "ms a turn in this process") {
		t.Fatalf("report:\n%s", out.String())
	}
	// And what it allocated: the turns' messages at least.
	if res.Allocated < int64(res.Turns)*512 || !strings.Contains(out.String(), "KB a turn allocated") {
		t.Fatalf("allocated %d bytes for %d turns; report:\n%s", res.Allocated, res.Turns, out.String())
	}
	// So is what the process wrote to storage, where the system says.
	if _, err := os.Stat("/proc/self/io"); err == nil {
		if res.Written < 0 || !strings.Contains(out.String(), "KB a turn written to storage") {
			t.Fatalf("written %d; report:\n%s", res.Written, out.String())
		}
	}
}

// The stub model plays the bench's turns through purser's own OpenAI
// adapter: a tool call for an add with an amount, a question without one,
// a read tool for a spending question, text after a tool result.
func TestStubModelDecidesTheBenchTurns(t *testing.T) {
	srv := httptest.NewServer(bench.StubModel{Latency: 10 * time.Millisecond})
	defer srv.Close()
	m, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "stub", Protocol: llm.ProtocolTools})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give string
		want string
	}{
		{"add coffee £3.50", contracts.ToolAddExpense},
		{"add a taxi ride", "clarify"},
		{"what did I spend this month?", contracts.ToolListExpenses},
		{"hello", "answer"},
	}
	for _, tt := range tests {
		d, err := m.Decide(context.Background(), orchestratorPrompt(tt.give))
		if err != nil {
			t.Fatalf("%q: %v", tt.give, err)
		}
		got := string(d.Kind)
		if len(d.Calls) == 1 {
			got = d.Calls[0].Tool
		}
		if got == contracts.ToolAskClarification || d.Kind == orchestrator.DecisionClarify {
			got = "clarify"
		}
		if got != tt.want {
			t.Errorf("%q: decided %s (%+v), want %s", tt.give, got, d, tt.want)
		}
	}
}

// With a tag on the person's message the stub decides as without it, and
// logs each call by the tag's conversation and message: when it came,
// when its first token and its usable output were written (a tool call's
// at its end, a text's at its first piece) and its prompt's size.
func TestStubModelLogsTaggedCalls(t *testing.T) {
	log := &bench.CallLog{}
	srv := httptest.NewServer(bench.StubModel{Latency: 10 * time.Millisecond, Calls: log})
	defer srv.Close()
	m, err := llm.New(llm.Config{BaseURL: srv.URL + "/v1", Model: "stub", Protocol: llm.ProtocolTools})
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.Decide(context.Background(), orchestratorPrompt("add a taxi ride"+bench.Tag("b1-u3", 7)))
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != orchestrator.DecisionClarify && (len(d.Calls) != 1 || d.Calls[0].Tool != contracts.ToolAskClarification) {
		t.Fatalf("tagged taxi ride: %+v, want a clarifying question (the tag's digits are not an amount)", d)
	}
	if _, err := m.Decide(context.Background(), orchestratorPrompt("hello")); err != nil {
		t.Fatal(err)
	}
	calls := loggedCalls(t, log, 2)
	c := calls[0]
	if c.Conv != "b1-u3" || c.Turn != 7 || c.Reply != contracts.ToolAskClarification || c.PromptTokens <= 0 {
		t.Fatalf("call %+v: want b1-u3, message 7, ask_clarification, a prompt", c)
	}
	if c.FirstToken.Before(c.Received) || !c.Ready.Equal(c.Done) {
		t.Fatalf("tool call: received %v, first token %v, ready %v, done %v: want ready at its end", c.Received, c.FirstToken, c.Ready, c.Done)
	}
	c = calls[1]
	if c.Conv != "" || c.Reply != "text" || c.Ready.IsZero() || !c.Ready.Equal(c.FirstToken) || !c.Ready.Before(c.Done) {
		t.Fatalf("untagged text call %+v: want no conversation, ready at the first piece, before the end", c)
	}
	// The system prompt and tool definitions are read in every call, so a
	// longer message is a longer prompt by about its length.
	if _, err := m.Decide(context.Background(), orchestratorPrompt("hello"+strings.Repeat(" and more", 100))); err != nil {
		t.Fatal(err)
	}
	if d := loggedCalls(t, log, 3)[2].PromptTokens - calls[1].PromptTokens; d < 200 || d > 250 {
		t.Fatalf("900 more characters gave %d more tokens, want about 225", d)
	}
}

// loggedCalls waits for the stub to log n calls: the adapter may have its
// answer before the stub's handler has returned.
func loggedCalls(t *testing.T, log *bench.CallLog, n int) []bench.Call {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		calls := log.Calls()
		if len(calls) >= n || time.Now().After(deadline) {
			if len(calls) != n {
				t.Fatalf("%d calls logged, want %d", len(calls), n)
			}
			return calls
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// With Messages, each user sends that many messages and stops, an add's
// approval being part of its message; tagged messages go through the
// baseline as untagged ones do, and every served turn's times are kept.
func TestRunSendsMessagesEach(t *testing.T) {
	b, ctx := baselineFor(t)
	res, err := bench.Run(ctx, bench.Options{URL: b.URL, Token: func(int) string { return "" }, Users: 2, Messages: 4,
		Duration: time.Minute, Label: "m", Tag: true})
	if err != nil {
		t.Fatal(err)
	}
	// User 0: read, add (+approve), clarify, read: 5 turns; user 1: add
	// (+approve), clarify, read, add (+approve): 6.
	if res.Errors != 0 || res.Turns != 11 || len(res.Times) != 11 {
		t.Fatalf("turns %d, times %d, errors %d %v: want 11 served", res.Turns, len(res.Times), res.Errors, res.ErrorText)
	}
	perConv := map[string]int{}
	for _, tt := range res.Times {
		perConv[tt.Conv]++
		if tt.First.Before(tt.Sent) {
			t.Fatalf("turn %+v: first token before it was sent", tt)
		}
	}
	if perConv["m-u0"] != 5 || perConv["m-u1"] != 6 {
		t.Fatalf("turns by conversation %v", perConv)
	}
}

// A frame refused before it became a turn (the per-user rate limit) is
// answered with an error naming the frame, not the conversation. The bench
// counts it as an error at once; it used to wait out the turn's timeout,
// so every user stood still and the run looked like a stalled server.
func TestRefusedFrameCountsAsAnErrorAtOnce(t *testing.T) {
	var refused atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{auth.Subprotocol}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			_, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			var in struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(data, &in)
			out, _ := json.Marshal(contracts.ServerFrame{Type: contracts.FrameError, At: time.Now(),
				Error: &contracts.ErrorBody{Code: contracts.ErrCodeRateLimited, Message: "too many messages", ID: in.ID}})
			if c.Write(r.Context(), websocket.MessageText, out) != nil {
				return
			}
			refused.Add(1)
		}
	}))
	defer srv.Close()
	// The turn timeout outlasts the test's own deadline: waiting it out
	// shows as Run returning the context's error.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := bench.Run(ctx, bench.Options{URL: "ws" + strings.TrimPrefix(srv.URL, "http"), Token: func(int) string { return "" },
		Users: 2, Duration: 300 * time.Millisecond, Pause: 50 * time.Millisecond, Timeout: time.Hour, Label: "r"})
	if err != nil {
		t.Fatalf("run: %v (errors %d: %v)", err, res.Errors, res.ErrorText)
	}
	if res.Turns != 0 || res.Errors == 0 || int64(res.Errors) != refused.Load() {
		t.Fatalf("turns %d, errors %d, frames refused %d: want every refused frame counted as an error", res.Turns, res.Errors, refused.Load())
	}
	if !strings.Contains(strings.Join(res.ErrorText, "\n"), contracts.ErrCodeRateLimited) {
		t.Fatalf("error text %q does not name the refusal", res.ErrorText)
	}
}

// baselineFor starts a bare pipeline for t, stopped when t ends, and a
// context bounding the test's run to a minute.
func baselineFor(t *testing.T) (*bench.Baseline, context.Context) {
	t.Helper()
	b, err := bench.StartBaseline(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return b, ctx
}
