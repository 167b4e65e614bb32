// Package tracing makes purser's OpenTelemetry spans and, when
// OTEL_EXPORTER_OTLP_ENDPOINT is set, exports them over OTLP (see
// FromEnv). Without an endpoint every Tracer is the zero Tracer, which
// makes no span and costs a nil check.
//
// A turn is one trace, whatever service or replica handles it: its trace
// id is the one every bus message of the turn already carries in its
// traceparent header (internal/bus derives it from the turn id, and the
// span id from the message id). A publish span takes the ids its
// message's header names, so the consumer's span, whose parent is that
// header, hangs under it; a turn's invoke_agent span has ids derived from
// the turn id, so the orchestrator's work on the turn (model calls, tool
// requests, the answer) hangs under it in whichever handler or replica it
// runs. Spans carry ids and names only: never message text, tool
// arguments or amounts.
package tracing

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// AgentName is purser's gen_ai.agent.name.
const AgentName = "purser"

// Attribute keys, from the OpenTelemetry GenAI and messaging semantic
// conventions, and purser's own.
const (
	keyOperation     = attribute.Key("gen_ai.operation.name")
	keyConversation  = attribute.Key("gen_ai.conversation.id")
	keyAgentName     = attribute.Key("gen_ai.agent.name")
	keyProvider      = attribute.Key("gen_ai.provider.name")
	keySystem        = attribute.Key("gen_ai.system") // the older name of gen_ai.provider.name
	keyRequestModel  = attribute.Key("gen_ai.request.model")
	keyResponseModel = attribute.Key("gen_ai.response.model")
	keyInputTokens   = attribute.Key("gen_ai.usage.input_tokens")
	keyOutputTokens  = attribute.Key("gen_ai.usage.output_tokens")
	keyToolName      = attribute.Key("gen_ai.tool.name")
	keyToolCallID    = attribute.Key("gen_ai.tool.call.id")
	keyToolType      = attribute.Key("gen_ai.tool.type")
	keyErrorType     = attribute.Key("error.type")
	keyMsgSystem     = attribute.Key("messaging.system")
	keyMsgDest       = attribute.Key("messaging.destination.name")
	keyMsgOperation  = attribute.Key("messaging.operation.type")
	keyMsgID         = attribute.Key("messaging.message.id")
	keyTurn          = attribute.Key("purser.turn.id")
	keyTenant        = attribute.Key("purser.tenant.id")
	keyOutcome       = attribute.Key("purser.turn.outcome")
	keyFrame         = attribute.Key("purser.frame.type")
)

// Tracer makes the spans of one service. The zero Tracer makes none: each
// method then returns its context unchanged and a span that records
// nothing.
type Tracer struct {
	t trace.Tracer
}

// New returns a Tracer over tp; nil gives the zero Tracer.
func New(tp trace.TracerProvider) Tracer {
	if tp == nil {
		return Tracer{}
	}
	return Tracer{t: tp.Tracer("github.com/purser-ai/purser")}
}

// Enabled reports whether t makes spans.
func (t Tracer) Enabled() bool { return t.t != nil }

var none trace.Span = noop.Span{}

type conversationKey struct{}

// withConversation notes the conversation that spans started from ctx
// belong to.
func withConversation(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, conversationKey{}, id)
}

func conversationAttr(ctx context.Context, id string) []attribute.KeyValue {
	if id == "" {
		id, _ = ctx.Value(conversationKey{}).(string)
	}
	if id == "" {
		return nil
	}
	return []attribute.KeyValue{keyConversation.String(id)}
}

// ReceiveTurn starts the span of the ingress taking a person's turn: the
// root of the turn's trace, whose id derives from turnID.
func (t Tracer) ReceiveTurn(ctx context.Context, tenant, conversation, turnID string) (context.Context, trace.Span) {
	if t.t == nil {
		return ctx, none
	}
	tid, _ := ids(turnID, turnID)
	attrs := append(conversationAttr(ctx, conversation), keyTurn.String(turnID), keyTenant.String(tenant))
	return t.startWithIDs(withConversation(ctx, conversation), tid, trace.SpanID{}, "receive turn",
		trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// InTurn returns ctx with the turn's invoke_agent span as the parent of
// the spans started from it (model calls, tool requests, the events that
// end the turn), in whichever handler or replica they run. See EndTurn.
func (t Tracer) InTurn(ctx context.Context, conversation, turnID string) context.Context {
	if t.t == nil || turnID == "" {
		return ctx
	}
	tid, sid := agentIDs(turnID)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	return withConversation(trace.ContextWithSpanContext(ctx, sc), conversation)
}

// EndTurn records the turn's invoke_agent span, from start to end, once
// the turn ended with outcome (answered, clarified, proposed, error). Its
// parent is the publish of the person's turn; InTurn gave its id to the
// spans under it.
func (t Tracer) EndTurn(tenant, conversation, turnID, outcome string, start, end time.Time) {
	if t.t == nil || turnID == "" {
		return
	}
	tid, sid := agentIDs(turnID)
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), turnPublish(turnID))
	attrs := append(conversationAttr(ctx, conversation), keyOperation.String("invoke_agent"), keyAgentName.String(AgentName),
		keyTurn.String(turnID), keyTenant.String(tenant), keyOutcome.String(outcome))
	_, span := t.startWithIDs(ctx, tid, sid, "invoke_agent "+AgentName, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	if outcome == "error" {
		span.SetStatus(codes.Error, "")
		span.SetAttributes(keyErrorType.String("turn_error"))
	}
	span.End(trace.WithTimestamp(end))
}

// Chat starts the span of one model call: "chat <model>", a client span
// under the turn's invoke_agent. provider is gen_ai.provider.name (e.g.
// "openai" for any server of the OpenAI API). Record usage with Usage.
func (t Tracer) Chat(ctx context.Context, provider, model string) (context.Context, trace.Span) {
	if t.t == nil {
		return ctx, none
	}
	attrs := append(conversationAttr(ctx, ""), keyOperation.String("chat"), keyProvider.String(provider), keySystem.String(provider),
		keyRequestModel.String(model))
	return t.t.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// Usage notes a model call's token counts and the model that answered on
// the chat span in ctx, if any.
func Usage(ctx context.Context, model string, input, output int) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(keyInputTokens.Int(input), keyOutputTokens.Int(output))
	if model != "" {
		span.SetAttributes(keyResponseModel.String(model))
	}
}

// Tool starts the span of one tool call: "execute_tool <tool>". Its
// duration is the tool's.
func (t Tracer) Tool(ctx context.Context, conversation, tool, callID string) (context.Context, trace.Span) {
	if t.t == nil {
		return ctx, none
	}
	attrs := append(conversationAttr(ctx, conversation), keyOperation.String("execute_tool"), keyToolName.String(tool),
		keyToolCallID.String(callID), keyToolType.String("function"))
	return t.t.Start(withConversation(ctx, conversation), "execute_tool "+tool, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attrs...))
}

// Deliver starts the span of the notifier storing a frame of a
// conversation and sending it to the person's sockets. Outside any span
// (the person's own message, which the ingress hands over by request) it
// hangs under the publish of the turn turnID, if named.
func (t Tracer) Deliver(ctx context.Context, conversation, turnID, frameType string) (context.Context, trace.Span) {
	if t.t == nil {
		return ctx, none
	}
	if !trace.SpanContextFromContext(ctx).IsValid() && turnID != "" {
		ctx = trace.ContextWithRemoteSpanContext(ctx, turnPublish(turnID))
	}
	attrs := append(conversationAttr(ctx, conversation), keyFrame.String(frameType))
	return t.t.Start(withConversation(ctx, conversation), "deliver "+frameType, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attrs...))
}

// End ends span, marking it failed when err is not nil. Only a class of
// error is recorded (errType, "_OTHER" when empty), never its text, which
// may quote what a person wrote.
func End(span trace.Span, err error, errType string) {
	if err != nil {
		if errType == "" {
			errType = "_OTHER"
		}
		span.SetStatus(codes.Error, "")
		span.SetAttributes(keyErrorType.String(errType))
	}
	span.End()
}

// Fail marks span failed with a class of error, for an outcome that is
// not a Go error (a tool's error result, say).
func Fail(span trace.Span, errType string) {
	span.SetStatus(codes.Error, "")
	span.SetAttributes(keyErrorType.String(errType))
}

// startWithIDs starts a span whose ids are tid and sid where those are
// valid (see idGenerator), and returns a context that holds the span but
// not the forced ids, so that spans under it get ids of their own.
func (t Tracer) startWithIDs(ctx context.Context, tid trace.TraceID, sid trace.SpanID, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	_, span := t.t.Start(context.WithValue(ctx, forcedKey{}, forcedIDs{trace: tid, span: sid}), name, opts...)
	return trace.ContextWithSpan(ctx, span), span
}
