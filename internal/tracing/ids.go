package tracing

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/purser-ai/purser/internal/bus"
)

// ids are the trace and span ids internal/bus derives for a message of
// the turn (correlation) with id msgID: the ids of its traceparent header.
func ids(correlation, msgID string) (trace.TraceID, trace.SpanID) {
	sc := parseTraceparent(bus.Traceparent(correlation, msgID))
	return sc.TraceID(), sc.SpanID()
}

// agentIDs are the ids of a turn's invoke_agent span: the turn's trace,
// and a span id no message of the turn has.
func agentIDs(turnID string) (trace.TraceID, trace.SpanID) {
	tid, _ := ids(turnID, turnID)
	_, sid := ids(turnID, "invoke_agent\x00"+turnID)
	return tid, sid
}

// turnPublish is the span context of the ingress's publish of the turn
// turnID: the parent of what belongs to the turn but runs outside its
// spans.
func turnPublish(turnID string) trace.SpanContext {
	tid, sid := ids(turnID, turnID)
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
}

// parseTraceparent reads a W3C traceparent; invalid gives an invalid
// span context.
func parseTraceparent(tp string) trace.SpanContext {
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	return trace.SpanContextFromContext(ctx)
}

type forcedKey struct{}

// forcedIDs are the ids the next span started with the context must have,
// where valid.
type forcedIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// idGenerator gives random ids, except where the context names the ids a
// span must have: the trace of a turn's root span, the span id a message's
// traceparent header already names for its publish, the id of a turn's
// invoke_agent span.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	f, _ := ctx.Value(forcedKey{}).(forcedIDs)
	tid, sid := f.trace, f.span
	if !tid.IsValid() {
		binary.BigEndian.PutUint64(tid[:8], rand.Uint64())
		binary.BigEndian.PutUint64(tid[8:], rand.Uint64())
	}
	if !sid.IsValid() {
		sid = randomSpanID()
	}
	return tid, sid
}

func (idGenerator) NewSpanID(ctx context.Context, tid trace.TraceID) trace.SpanID {
	if f, ok := ctx.Value(forcedKey{}).(forcedIDs); ok && f.span.IsValid() && f.trace == tid {
		return f.span
	}
	return randomSpanID()
}

func randomSpanID() trace.SpanID {
	var sid trace.SpanID
	for !sid.IsValid() {
		binary.BigEndian.PutUint64(sid[:], rand.Uint64())
	}
	return sid
}
