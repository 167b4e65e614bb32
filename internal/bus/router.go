package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/warm"
)

// RouterMetrics are the bus's handler series; register once per registry.
type RouterMetrics struct {
	handled  *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewRouterMetrics registers purser_bus_* series on reg.
func NewRouterMetrics(reg prometheus.Registerer) *RouterMetrics {
	m := &RouterMetrics{
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_bus_messages_handled_total",
			Help: "Messages handled, by service, handler and outcome (ok, retry, dead_letter)."}, []string{"service", "handler", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "purser_bus_handler_seconds",
			Help: "Handler duration including retries.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"service", "handler"}),
	}
	reg.MustRegister(m.handled, m.duration)
	return m
}

// NewRouter builds a watermill router for service with purser's
// middleware, outermost first: handlers run on goroutines that outlive
// one message (onWarmStack), correlation id, metrics, dead-lettering of
// permanent errors to purser.dlq.<service> (with Purser-Dlq-Reason, a log
// line and the dead_letter outcome), last-error note (for the subscriber's
// dead-letter reason), bounded retry of other errors, and recoverer (a
// panic becomes an error; the service keeps serving). Dead-lettering sits
// outside retry, or retry would never run.
func NewRouter(service string, pub message.Publisher, log *slog.Logger, m *RouterMetrics) (*message.Router, error) {
	r, err := message.NewRouter(message.RouterConfig{CloseTimeout: 20 * time.Second}, newRouterLogger(log))
	if err != nil {
		return nil, err
	}
	dlq, err := DLQSubject(service)
	if err != nil {
		return nil, err
	}
	retry := middleware.Retry{
		MaxRetries:      2,
		InitialInterval: 100 * time.Millisecond,
		MaxInterval:     time.Second,
		Multiplier:      2,
		ShouldRetry:     func(p middleware.RetryParams) bool { return !IsPermanent(p.Err) },
	}
	r.AddMiddleware(
		onWarmStack,
		middleware.CorrelationID,
		m.middleware(service),
		deadLetter(pub, dlq, log),
		noteLastError,
		retry.Middleware,
		middleware.Recoverer,
	)
	return r, nil
}

// onWarmStack runs the rest of the chain on a warm goroutine (package
// warm): watermill starts a goroutine for each message, and a handler's
// path grew its small stack several times (three quarters of the stack
// copying in a profile at 1,000 bench users). The router's goroutine only
// waits, so a handler's concurrency, context and result are unchanged.
func onWarmStack(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		c := calls.Get().(*call)
		c.h, c.msg = h, msg
		warm.Go(c.run)
		<-c.done
		out, err := c.out, c.err
		*c = call{done: c.done}
		calls.Put(c)
		return out, err
	}
}

// call is one message for a warm goroutine, and the handler's result.
type call struct {
	h    message.HandlerFunc
	msg  *message.Message
	out  []*message.Message
	err  error
	done chan struct{}
}

func (c *call) run() {
	c.out, c.err = c.h(c.msg)
	c.done <- struct{}{}
}

var calls = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

func (m *RouterMetrics) middleware(service string) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			start := time.Now()
			out, err := h(msg)
			name := message.HandlerNameFromCtx(msg.Context())
			m.duration.WithLabelValues(service, name).Observe(time.Since(start).Seconds())
			outcome := "ok"
			switch {
			case err == nil && msg.Metadata.Get(metaDeadLettered) != "":
				outcome = "dead_letter"
			case err != nil:
				outcome = "retry"
			}
			m.handled.WithLabelValues(service, name, outcome).Inc()
			return out, err
		}
	}
}

// metaDeadLettered marks, for the metrics middleware, a message that was
// settled by sending it to the dead-letter queue.
const metaDeadLettered = metaPrefix + "dead_lettered"

// deadLetter sends a message whose handler failed permanently to the
// service's dead-letter subject, with the reason and the original subject
// in headers, logs it, and settles it. Only a failed publish is retried.
func deadLetter(pub message.Publisher, dlq string, log *slog.Logger) message.HandlerMiddleware {
	return func(h message.HandlerFunc) message.HandlerFunc {
		return func(msg *message.Message) ([]*message.Message, error) {
			out, err := h(msg)
			if err == nil || !IsPermanent(err) {
				return out, err
			}
			reason := truncate(err.Error(), 500)
			dead := message.NewMessage(msg.UUID+"-dlq", msg.Payload)
			for k, v := range msg.Metadata {
				dead.Metadata.Set(k, v)
			}
			dead.Metadata.Set(HeaderDLQReason, reason)
			dead.Metadata.Set(HeaderDLQSubject, msg.Metadata.Get(MetaSubject))
			dead.SetContext(msg.Context())
			if perr := pub.Publish(dlq, dead); perr != nil {
				return nil, fmt.Errorf("dead-letter (%s): %w", reason, perr)
			}
			log.Warn("dead letter", "handler", message.HandlerNameFromCtx(msg.Context()), "subject", msg.Metadata.Get(MetaSubject),
				"type", msg.Metadata.Get(HeaderType), "correlation_id", msg.Metadata.Get(HeaderCorrelation), "reason", reason)
			msg.Metadata.Set(metaDeadLettered, "1")
			return nil, nil
		}
	}
}

// noteLastError keeps the final error's text on the message, so a message
// dead-lettered after its last delivery says why.
func noteLastError(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		out, err := h(msg)
		if err != nil {
			msg.Metadata.Set(metaLastError, truncate(err.Error(), 500))
			if BusUnavailable(err) {
				msg.Metadata.Set(metaBusDown, "1")
			}
		}
		return out, err
	}
}

// ErrUnavailable marks a handler's failure for want of something it
// depends on other than NATS (the database, found down when the handler
// failed): like a bus failure, it is retried without counting towards
// dead-lettering the message.
var ErrUnavailable = errors.New("a service the handler depends on is unavailable")

// BusUnavailable reports whether err says NATS could not be reached (a
// publish that timed out or found no server, a closed or reconnecting
// connection), or is ErrUnavailable: the message is fine, the
// infrastructure is not, so the failure does not count towards
// dead-lettering it.
func BusUnavailable(err error) bool {
	for _, target := range []error{ErrUnavailable, nats.ErrConnectionClosed, nats.ErrConnectionDraining, nats.ErrConnectionReconnecting,
		nats.ErrNoResponders, nats.ErrTimeout, nats.ErrDisconnected, jetstream.ErrNoStreamResponse, context.DeadlineExceeded} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// JetStreamAway reports whether err says the bus or JetStream did not
// answer for now (down, reconnecting, electing a leader: BusUnavailable,
// or JetStream's API answering 503), as opposed to refusing what was
// asked (a consumer that does not exist).
func JetStreamAway(err error) bool {
	var api *jetstream.APIError
	return BusUnavailable(err) || (errors.As(err, &api) && api.Code == 503)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
