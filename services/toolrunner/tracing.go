package toolrunner

import "github.com/purser-ai/purser/internal/tracing"

// WithTracing has the runner record an execute_tool span for each call it
// runs, in the trace of the call's turn. Without it, none is made.
func (r *Runner) WithTracing(t tracing.Tracer) *Runner {
	r.tracer = t
	return r
}
