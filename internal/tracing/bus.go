package tracing

import (
	"strings"

	"github.com/ThreeDotsLabs/watermill/message"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/purser-ai/purser/internal/bus"
)

// dedupPublisher is a publisher that can say when the stream dropped a
// publish as a repeat (bus.Publisher is one).
type dedupPublisher interface {
	message.Publisher
	PublishDedup(topic string, m *message.Message) (duplicate bool, err error)
}

// Publisher is a bus publisher that records a producer span for each
// message it sends. Create it with Tracer.Publisher.
type Publisher struct {
	pub dedupPublisher
	t   Tracer
}

var _ dedupPublisher = (*Publisher)(nil)

// Publisher wraps pub so that each message published gets a span,
// "publish <subject>", with the ids its traceparent header names: the
// consumer's span hangs under it. It returns pub itself when t makes no
// spans. The span's parent is the span in the message's context when it
// is of the same turn; otherwise the publish of the turn itself (for a
// message of a turn published outside its spans: answer tokens, or the
// outbox relay's republish after a crash), or none.
func (t Tracer) Publisher(pub *bus.Publisher) message.Publisher {
	if t.t == nil {
		return pub
	}
	return &Publisher{pub: pub, t: t}
}

// Publish publishes msgs to topic in order, each under its own span,
// stopping at the first failure.
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	for _, m := range msgs {
		span := p.start(topic, m)
		err := p.pub.Publish(topic, m)
		End(span, err, "publish")
		if err != nil {
			return err
		}
	}
	return nil
}

// PublishDedup is bus.Publisher.PublishDedup under a span.
func (p *Publisher) PublishDedup(topic string, m *message.Message) (bool, error) {
	span := p.start(topic, m)
	dup, err := p.pub.PublishDedup(topic, m)
	if dup {
		span.SetAttributes(attribute.Bool("purser.duplicate", true))
	}
	End(span, err, "publish")
	return dup, err
}

// Close closes the publisher it wraps.
func (p *Publisher) Close() error { return p.pub.Close() }

func (p *Publisher) start(topic string, m *message.Message) trace.Span {
	ctx := m.Context()
	attrs := append(messageAttrs(topic, m), keyMsgOperation.String("send"))
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...)}
	name := "publish " + destination(topic)
	sc := parseTraceparent(m.Metadata.Get(bus.HeaderTraceparent))
	if !sc.IsValid() {
		_, span := p.t.t.Start(ctx, name, opts...)
		return span
	}
	// The header's span id is this span's only when it was derived from
	// this message's id: a dead letter keeps the header of the message
	// it holds, whose publish has that id already.
	var sid trace.SpanID
	if _, derived := ids(m.Metadata.Get(bus.HeaderCorrelation), m.UUID); derived == sc.SpanID() {
		sid = sc.SpanID()
	}
	if parent := trace.SpanContextFromContext(ctx); parent.TraceID() != sc.TraceID() {
		// Published outside the turn's spans (answer tokens, a republish
		// by the outbox relay): under the publish of the turn itself.
		turn := m.Metadata.Get(bus.HeaderCorrelation)
		if parent := turnPublish(turn); turn == "" || parent.TraceID() != sc.TraceID() || parent.SpanID() == sid {
			opts = append(opts, trace.WithNewRoot())
		} else {
			ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
		}
	}
	_, span := p.t.startWithIDs(ctx, sc.TraceID(), sid, name, opts...)
	if span.SpanContext().IsSampled() {
		// The header now names a recorded span.
		m.Metadata.Set(bus.HeaderTraceparent, bus.SampledTraceparent(m.Metadata.Get(bus.HeaderTraceparent)))
	}
	return span
}

// Consume is router middleware that runs each handler under a consumer
// span, "process <subject>", whose parent is the message's traceparent.
// Add it last (innermost): each delivery attempt is a span of its own.
func (t Tracer) Consume() message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		if t.t == nil {
			return h
		}
		return func(msg *message.Message) ([]*message.Message, error) {
			subject := msg.Metadata.Get(bus.MetaSubject)
			// The header's parent counts as sampled whether or not the
			// publisher recorded it (it marks it sampled only then), so
			// a service that exports keeps its spans of a turn whose
			// other services export nothing, as the sampler says.
			ctx := msg.Context()
			if sc := parseTraceparent(msg.Metadata.Get(bus.HeaderTraceparent)); sc.IsValid() {
				ctx = trace.ContextWithRemoteSpanContext(ctx, sc.WithTraceFlags(sc.TraceFlags().WithSampled(true)))
			}
			attrs := append(messageAttrs(subject, msg), keyMsgOperation.String("process"))
			ctx, span := t.t.Start(withConversation(ctx, msg.Metadata.Get(bus.HeaderConversation)), "process "+destination(subject),
				trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
			orig := msg.Context()
			msg.SetContext(ctx)
			out, err := h(msg)
			msg.SetContext(orig)
			errType := ""
			if bus.IsPermanent(err) {
				errType = "permanent"
			}
			End(span, err, errType)
			return out, err
		}
	}
}

func messageAttrs(subject string, m *message.Message) []attribute.KeyValue {
	attrs := []attribute.KeyValue{keyMsgSystem.String("nats"), keyMsgDest.String(subject), keyMsgID.String(m.UUID)}
	if c := m.Metadata.Get(bus.HeaderConversation); c != "" {
		attrs = append(attrs, keyConversation.String(c))
	}
	if c := m.Metadata.Get(bus.HeaderCorrelation); c != "" {
		attrs = append(attrs, keyTurn.String(c))
	}
	return attrs
}

// destination is a subject without the ids it carries (tenant, user,
// conversation), for a span name of few values: purser.turns,
// purser.tool.request.<tool>, purser.agent, ...
func destination(subject string) string {
	parts := strings.Split(subject, ".")
	n := 2
	if len(parts) > 2 && parts[1] == "tool" {
		n = 3
		if parts[2] == "request" {
			n = 4
		}
	}
	return strings.Join(parts[:min(n, len(parts))], ".")
}
