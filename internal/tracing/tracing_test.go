package tracing

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
)

func recorder(t *testing.T) (Tracer, *tracetest.InMemoryExporter) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithIDGenerator(idGenerator{}))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return New(tp), exp
}

func spanNamed(t *testing.T, exp *tracetest.InMemoryExporter, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var all []string
		for _, s := range exp.GetSpans() {
			all = append(all, s.Name)
		}
		t.Fatalf("%d spans named %q, want 1 (have %q)", len(found), name, all)
	}
	return found[0]
}

func TestNoEndpointNoExporter(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, tt := range []struct {
		give map[string]string
		want bool
	}{
		{give: nil, want: false},
		{give: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, want: true},
		{give: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, want: true},
		{give: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"}, want: false},
		{give: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"}, want: false},
	} {
		e, err := FromEnv(context.Background(), env(tt.give))
		if err != nil {
			t.Fatalf("FromEnv(%v): %v", tt.give, err)
		}
		if got := e != nil; got != tt.want {
			t.Errorf("FromEnv(%v) exports = %v, want %v", tt.give, got, tt.want)
		}
		tr, err := e.Tracer("ingress")
		if err != nil {
			t.Fatal(err)
		}
		if tr.Enabled() != tt.want {
			t.Errorf("FromEnv(%v): tracer enabled = %v, want %v", tt.give, tr.Enabled(), tt.want)
		}
		if err := e.Shutdown(context.Background()); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	_, err := FromEnv(context.Background(), env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}))
	if err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Errorf("grpc protocol: err = %v, want one naming http/protobuf", err)
	}
}

// Without an exporter nothing is wrapped: the publisher is the bus's own
// and the middleware is the handler itself.
func TestZeroTracerWrapsNothing(t *testing.T) {
	var tr Tracer
	pub := bus.NewPublisher(nil, nil)
	if got := tr.Publisher(pub); got != message.Publisher(pub) {
		t.Errorf("zero tracer's publisher is %T, want the bus publisher itself", got)
	}
	ctx := context.Background()
	if got, span := tr.Tool(ctx, "c", "list_expenses", "call1"); got != ctx || span.IsRecording() {
		t.Errorf("zero tracer made a span")
	}
	tr.EndTurn("acme", "c", "t1", "answered", time.Now(), time.Now())
}

// deliverSub is a NATS server with JetStream and a subscription to ann's
// deliver subject.
func deliverSub(t *testing.T) (*nats.Conn, jetstream.JetStream, *nats.Subscription) {
	t.Helper()
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := nc.SubscribeSync("purser.deliver.acme.ann")
	if err != nil {
		t.Fatal(err)
	}
	return nc, js, sub
}

// routed is m, published as message id, as the router hands it to a
// handler.
func routed(m *nats.Msg, id string) *message.Message {
	in := message.NewMessage(id, m.Data)
	for k := range m.Header {
		in.Metadata.Set(k, m.Header.Get(k))
	}
	in.Metadata.Set(bus.MetaSubject, m.Subject)
	return in
}

// A publish span has the ids its message's traceparent names, so the
// consumer's span, parented by the header, hangs under it; both name the
// subject and conversation.
func TestPublishAndConsumeShareTheHeadersIDs(t *testing.T) {
	tr, exp := recorder(t)
	nc, js, sub := deliverSub(t)
	pub := tr.Publisher(bus.NewPublisher(nc, js))

	ctx, root := tr.ReceiveTurn(context.Background(), "acme", "c1", "t1")
	msg := bus.NewMessage("t1-frame-1", []byte(`{}`), bus.Headers{Type: "answer", Tenant: "acme", User: "ann", Conversation: "c1", Correlation: "t1"})
	msg.SetContext(ctx)
	if err := pub.Publish("purser.deliver.acme.ann", msg); err != nil {
		t.Fatal(err)
	}
	root.End()
	got, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	header := parseTraceparent(got.Header.Get(bus.HeaderTraceparent))
	if !header.IsSampled() {
		t.Errorf("traceparent %q names a recorded publish but is not marked sampled", got.Header.Get(bus.HeaderTraceparent))
	}

	publish := spanNamed(t, exp, "publish purser.deliver")
	if publish.SpanContext.TraceID() != header.TraceID() || publish.SpanContext.SpanID() != header.SpanID() {
		t.Errorf("publish span %s/%s, header names %s/%s", publish.SpanContext.TraceID(), publish.SpanContext.SpanID(), header.TraceID(), header.SpanID())
	}
	receive := spanNamed(t, exp, "receive turn")
	if publish.Parent.SpanID() != receive.SpanContext.SpanID() {
		t.Errorf("publish span's parent %s, want the turn's span %s", publish.Parent.SpanID(), receive.SpanContext.SpanID())
	}
	if tid, _ := ids("t1", "t1"); receive.SpanContext.TraceID() != tid || receive.Parent.IsValid() {
		t.Errorf("turn span in trace %s with parent %v; want the root of trace %s", receive.SpanContext.TraceID(), receive.Parent, tid)
	}

	// The consumer side, as the router runs a handler.
	in := routed(got, "t1-frame-1")
	var inHandler trace.SpanContext
	_, err = tr.Consume()(func(m *message.Message) ([]*message.Message, error) {
		inHandler = trace.SpanContextFromContext(m.Context())
		return nil, bus.Permanent(errors.New("bad frame"))
	})(in)
	if err == nil {
		t.Fatal("the handler's error was lost")
	}
	process := spanNamed(t, exp, "process purser.deliver")
	if process.Parent.SpanID() != publish.SpanContext.SpanID() || process.SpanContext.TraceID() != publish.SpanContext.TraceID() {
		t.Errorf("consumer span's parent %s, want the publish %s", process.Parent.SpanID(), publish.SpanContext.SpanID())
	}
	if inHandler.SpanID() != process.SpanContext.SpanID() {
		t.Errorf("the handler ran under span %s, want the consumer's %s", inHandler.SpanID(), process.SpanContext.SpanID())
	}
	attrs := map[string]string{}
	for _, kv := range process.Attributes {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	for k, v := range map[string]string{"messaging.system": "nats", "messaging.destination.name": "purser.deliver.acme.ann",
		"gen_ai.conversation.id": "c1", "error.type": "permanent"} {
		if attrs[k] != v {
			t.Errorf("consumer span %s = %q, want %q", k, attrs[k], v)
		}
	}
}

// A message published by a process that records no span says so (its
// traceparent is not marked sampled, which also spares nats-server a map
// of its headers); a consumer that records spans keeps its span of it,
// under the header's ids.
func TestAnUnrecordedPublishStillParentsTheConsumer(t *testing.T) {
	tr, exp := recorder(t)
	nc, js, sub := deliverSub(t)
	pub := Tracer{}.Publisher(bus.NewPublisher(nc, js)) // tracing off here
	if err := pub.Publish("purser.deliver.acme.ann", bus.NewMessage("t2-frame-1", []byte(`{}`),
		bus.Headers{Type: "answer", Tenant: "acme", User: "ann", Conversation: "c1", Correlation: "t2"})); err != nil {
		t.Fatal(err)
	}
	got, err := sub.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tp := got.Header.Get(bus.HeaderTraceparent)
	header := parseTraceparent(tp)
	if !header.IsValid() || header.IsSampled() {
		t.Fatalf("traceparent %q: want a valid one not marked sampled", tp)
	}
	in := routed(got, "t2-frame-1")
	if _, err := tr.Consume()(func(*message.Message) ([]*message.Message, error) { return nil, nil })(in); err != nil {
		t.Fatal(err)
	}
	process := spanNamed(t, exp, "process purser.deliver")
	if process.SpanContext.TraceID() != header.TraceID() || process.Parent.SpanID() != header.SpanID() {
		t.Errorf("consumer span %s under %s, want trace %s under %s", process.SpanContext.TraceID(), process.Parent.SpanID(), header.TraceID(), header.SpanID())
	}
}

// Work on a turn in any handler (a model call, a tool request) hangs
// under the turn's invoke_agent span, recorded when the turn ends, whose
// parent is the publish of the person's turn.
func TestInTurnAndEndTurnAgree(t *testing.T) {
	tr, exp := recorder(t)
	start := time.Now()
	ctx := tr.InTurn(context.Background(), "c1", "t1")
	_, chat := tr.Chat(ctx, "openai", "gpt-test")
	Usage(trace.ContextWithSpan(ctx, chat), "", 10, 2)
	chat.End()
	tr.EndTurn("acme", "c1", "t1", "answered", start, time.Now())

	agent := spanNamed(t, exp, "invoke_agent purser")
	model := spanNamed(t, exp, "chat gpt-test")
	if model.Parent.SpanID() != agent.SpanContext.SpanID() || model.SpanContext.TraceID() != agent.SpanContext.TraceID() {
		t.Errorf("chat span's parent %s, want invoke_agent %s", model.Parent.SpanID(), agent.SpanContext.SpanID())
	}
	turn := parseTraceparent(bus.Traceparent("t1", "t1"))
	if agent.Parent.SpanID() != turn.SpanID() || agent.SpanContext.TraceID() != turn.TraceID() {
		t.Errorf("invoke_agent's parent %s in %s, want the turn's publish %s in %s", agent.Parent.SpanID(), agent.SpanContext.TraceID(), turn.SpanID(), turn.TraceID())
	}
	if !agent.StartTime.Equal(start) {
		t.Errorf("invoke_agent started %v, want the turn's start %v", agent.StartTime, start)
	}
	attrs := map[string]string{}
	for _, kv := range model.Attributes {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	for k, v := range map[string]string{"gen_ai.conversation.id": "c1", "gen_ai.usage.input_tokens": "10", "gen_ai.usage.output_tokens": "2",
		"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-test"} {
		if attrs[k] != v {
			t.Errorf("chat span %s = %q, want %q", k, attrs[k], v)
		}
	}
}
