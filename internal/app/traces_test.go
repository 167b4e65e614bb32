//go:build traces

// The trace test builds the OpenTelemetry collector's OTLP receiver (the
// module internal/tracing/otlpsink) from the Go module proxy, which costs
// minutes on a cold build cache: it runs under `make test-traces`, not
// `make test`.

package app

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
)

// span is one span as otlpsink writes it.
type span struct {
	Service      string         `json:"service"`
	TraceID      string         `json:"trace_id"`
	SpanID       string         `json:"span_id"`
	ParentSpanID string         `json:"parent_span_id"`
	Name         string         `json:"name"`
	Kind         string         `json:"kind"`
	Attributes   map[string]any `json:"attributes"`
}

// startSink builds otlpsink and runs it on a loopback port; it returns
// the OTLP endpoint and the file its spans are written to.
func startSink(t *testing.T) (endpoint, out string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "otlpsink")
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", "tracing", "otlpsink")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build otlpsink: %v\n%s", err, b)
	}
	out = filepath.Join(dir, "spans.jsonl")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin)
	cmd.Stdout = f
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if addr, ok := strings.CutPrefix(lines.Text(), "listening "); ok {
			go func() {
				for lines.Scan() {
					t.Log("otlpsink:", lines.Text())
				}
			}()
			return "http://" + addr, out
		}
		t.Log("otlpsink:", lines.Text())
	}
	t.Fatal("otlpsink stopped before listening")
	return "", ""
}

func readSpans(t *testing.T, path string) []span {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var spans []span
	for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var s span
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("otlpsink wrote %q: %v", line, err)
		}
		spans = append(spans, s)
	}
	return spans
}

// traceOf is the trace every message of a turn names in its traceparent.
func traceOf(turnID string) string { return strings.Split(bus.Traceparent(turnID, turnID), "-")[1] }

// With OTEL_EXPORTER_OTLP_ENDPOINT set, a turn that asks a model server
// twice and runs a tool is one trace in a real OTLP receiver: spans from
// all four services in one tree under the ingress's, named after the
// GenAI conventions, with the conversation, the tool call's id and the
// model's token counts; a second turn is a second trace.
func TestTracesOfATurnReachAnOTLPReceiver(t *testing.T) {
	endpoint, spansFile := startSink(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_SERVICE_NAME", "")

	srv := llmtest.New(t)
	withUsage := func(r llmtest.Reply, in, out int) llmtest.Reply {
		r.Chunks = append(r.Chunks, llmtest.Usage(in, out))
		return r
	}
	srv.Push(
		withUsage(llmtest.ToolCalls(llmtest.Call{ID: "call_spend", Name: contracts.ToolListExpenses, Args: []string{`{"range":"this_month"}`}}), 321, 17),
		withUsage(llmtest.Text("You spent nothing this month."), 400, 9),
		withUsage(llmtest.Text("Hello again."), 120, 4),
	)
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.DataDir, cfg.HTTPAddr, cfg.NATSListen = t.TempDir(), "127.0.0.1:0", "127.0.0.1:0"
	cfg.OpenAIBaseURL, cfg.OpenAIKey, cfg.ModelName = srv.URL, "sk-test-0123456789-never-logged", "local-model"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan Info, 1)
	done := make(chan error, 1)
	logs := watchLogs(t)
	go func() { done <- Up(ctx, cfg, logs.logger(), func(i Info) { ready <- i }) }()
	var info Info
	select {
	case info = <-ready:
	case err := <-done:
		t.Fatalf("Up failed: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("Up not ready within 60 s")
	}

	c := dial(t, info, info.DemoToken)
	c.send(`{"type":"message","id":"m1","conversation_id":"c-trace","text":"what did I spend this month?"}`)
	first := c.next(contracts.FrameAck).TurnID
	frames := c.nextEach(contracts.FrameToolResult, contracts.FrameAnswer)
	callID := frames[contracts.FrameToolResult].Tool.CallID
	c.send(`{"type":"message","id":"m2","conversation_id":"c-trace","text":"hello"}`)
	second := c.next(contracts.FrameAck).TurnID
	c.next(contracts.FrameAnswer)

	// Stopping purser sends every span still waiting.
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Up returned %v at shutdown", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Up did not stop within 30 s")
	}
	logs.check(t)
	spans := readSpans(t, spansFile)

	byTrace := map[string][]span{}
	for _, s := range spans {
		byTrace[s.TraceID] = append(byTrace[s.TraceID], s)
	}
	one, two := byTrace[traceOf(first)], byTrace[traceOf(second)]
	if len(one) == 0 || len(two) == 0 || traceOf(first) == traceOf(second) {
		t.Fatalf("turns %s and %s: %d and %d spans in their traces; want two traces (all traces: %v)", first, second, len(one), len(two), traceNames(byTrace))
	}
	if len(byTrace) != 2 {
		t.Errorf("%d traces for two turns, want 2: %v", len(byTrace), traceNames(byTrace))
	}

	checkTree(t, "first turn", one)
	checkTree(t, "second turn", two)
	for _, svc := range []string{"purser-ingress", "purser-orchestrator", "purser-toolrunner", "purser-notifier"} {
		if !slices.ContainsFunc(one, func(s span) bool { return s.Service == svc }) {
			t.Errorf("the first turn's trace has no span from %s", svc)
		}
	}

	agent := find(t, one, "invoke_agent purser")
	wantAttrs(t, agent, map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "purser",
		"gen_ai.conversation.id": "c-trace", "purser.turn.outcome": "answered"})
	if agent.Service != "purser-orchestrator" {
		t.Errorf("invoke_agent from %s, want purser-orchestrator", agent.Service)
	}
	var chats []span
	for _, s := range one {
		if s.Name == "chat local-model" {
			chats = append(chats, s)
		}
	}
	if len(chats) != 2 {
		t.Fatalf("%d chat spans in the first turn, want 2 (the tool call, then the answer)", len(chats))
	}
	tokens := [][2]float64{}
	for _, ch := range chats {
		wantAttrs(t, ch, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.request.model": "local-model",
			"gen_ai.provider.name": "openai", "gen_ai.conversation.id": "c-trace"})
		if ch.ParentSpanID != agent.SpanID {
			t.Errorf("chat span's parent %s is not the turn's invoke_agent %s", ch.ParentSpanID, agent.SpanID)
		}
		in, _ := ch.Attributes["gen_ai.usage.input_tokens"].(float64)
		out, _ := ch.Attributes["gen_ai.usage.output_tokens"].(float64)
		tokens = append(tokens, [2]float64{in, out})
	}
	slices.SortFunc(tokens, func(a, b [2]float64) int { return int(a[0] - b[0]) })
	if !slices.Equal(tokens, [][2]float64{{321, 17}, {400, 9}}) {
		t.Errorf("chat token counts %v, want the model's [321 17] and [400 9]", tokens)
	}
	tool := find(t, one, "execute_tool "+contracts.ToolListExpenses)
	wantAttrs(t, tool, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": contracts.ToolListExpenses,
		"gen_ai.tool.call.id": callID, "gen_ai.conversation.id": "c-trace"})
	if tool.Service != "purser-toolrunner" {
		t.Errorf("execute_tool from %s, want purser-toolrunner", tool.Service)
	}
	root := find(t, one, "receive turn")
	if root.Service != "purser-ingress" || root.Kind != "Server" {
		t.Errorf("the trace's root is %s's %s span, want the ingress's server span", root.Service, root.Kind)
	}
	if d := find(t, one, "deliver answer"); d.Service != "purser-notifier" {
		t.Errorf("deliver answer from %s, want purser-notifier", d.Service)
	}
	for _, s := range one {
		if s.Kind == "Producer" || s.Kind == "Consumer" {
			if s.Attributes["messaging.system"] != "nats" || s.Attributes["messaging.destination.name"] == "" {
				t.Errorf("%s %s: messaging attributes %v", s.Service, s.Name, s.Attributes)
			}
		}
	}
	if !slices.ContainsFunc(one, func(s span) bool { return s.Name == "process purser.tool.request."+contracts.ToolListExpenses }) {
		t.Errorf("no consumer span of the tool request")
	}
	// Nothing a person wrote reaches an attribute.
	b, _ := os.ReadFile(spansFile)
	for _, text := range []string{"what did I spend", "You spent nothing", "this_month", "hello"} {
		if strings.Contains(string(b), text) {
			t.Errorf("a span carries %q", text)
		}
	}
}

// checkTree checks that spans form one tree: one root, the ingress's
// span, and every other span's parent in the trace.
func checkTree(t *testing.T, what string, spans []span) {
	t.Helper()
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanID] = true
	}
	var roots []string
	for _, s := range spans {
		switch {
		case s.ParentSpanID == "":
			roots = append(roots, s.Service+" "+s.Name)
		case !ids[s.ParentSpanID]:
			t.Errorf("%s: %s's span %q has a parent %s the trace lacks", what, s.Service, s.Name, s.ParentSpanID)
		}
	}
	if len(roots) != 1 || roots[0] != "purser-ingress receive turn" {
		t.Errorf("%s: roots %v, want the ingress's receive turn alone", what, roots)
	}
}

func find(t *testing.T, spans []span, name string) span {
	t.Helper()
	var found []span
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q, want 1 (have %v)", len(found), name, names(spans))
	}
	return found[0]
}

func wantAttrs(t *testing.T, s span, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if got := s.Attributes[k]; got != v {
			t.Errorf("%s %q: %s = %v, want %v", s.Service, s.Name, k, got, v)
		}
	}
}

func names(spans []span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Service+": "+s.Name)
	}
	slices.Sort(out)
	return out
}

func traceNames(byTrace map[string][]span) map[string][]string {
	out := map[string][]string{}
	for id, spans := range byTrace {
		out[id] = names(spans)
	}
	return out
}
