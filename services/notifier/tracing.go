package notifier

import "github.com/purser-ai/purser/internal/tracing"

// WithTracing has the notifier record a span for each frame it stores and
// delivers, in the trace of the turn the frame belongs to. Without it,
// none is made.
func (n *Notifier) WithTracing(t tracing.Tracer) *Notifier {
	n.tracer = t
	return n
}
