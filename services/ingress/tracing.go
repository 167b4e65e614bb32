package ingress

import "github.com/purser-ai/purser/internal/tracing"

// WithTracing has the ingress record a span for each turn it takes, the
// root of the turn's trace. Without it, none is made.
func (in *Ingress) WithTracing(t tracing.Tracer) *Ingress {
	in.tracer = t
	return in
}
