package ingress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The ingress keeps no database: it asks the notifier, by core NATS
// request/reply on one subject per operation (bus.NotifierCall), for
// catch-up frames, stored turns, history and the inbox.

// errNotifierUnavailable is returned when no notifier answered in time.
var errNotifierUnavailable = errors.New("notifier unavailable")

// failed is what every notifier reply says when a request failed.
type failed interface {
	Failure() *contracts.InboxError
}

// ask sends req on call's subject for tenant and user and returns the
// notifier's reply. A reply that carries an error is returned as
// *contracts.InboxError; no answer is errNotifierUnavailable.
func ask[Req any, Rep failed](ctx context.Context, in *Ingress, call bus.NotifierCall[Req, Rep], tenant, user string, req Req) (Rep, error) {
	var zero Rep
	subject, err := call.Subject(tenant, user)
	if err != nil {
		return zero, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return zero, fmt.Errorf("encode %s request: %w", call.Op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, in.cfg.RequestTimeout)
	defer cancel()
	msg, err := in.nc.RequestWithContext(ctx, subject, body)
	if err != nil {
		in.metrics.notifierRequests.WithLabelValues(call.Op, "unavailable").Inc()
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
			return zero, fmt.Errorf("%s: %w", call.Op, errNotifierUnavailable)
		}
		return zero, fmt.Errorf("%s request: %w", call.Op, err)
	}
	// A reply is read leniently (json.Unmarshal, not contracts.Decode): a
	// newer notifier may add a field to it during a rolling deploy.
	var reply Rep
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		in.metrics.notifierRequests.WithLabelValues(call.Op, "bad_reply").Inc()
		return zero, fmt.Errorf("decode %s reply: %w", call.Op, err)
	}
	if ie := reply.Failure(); ie != nil {
		in.metrics.notifierRequests.WithLabelValues(call.Op, ie.Code).Inc()
		return zero, ie
	}
	in.metrics.notifierRequests.WithLabelValues(call.Op, "ok").Inc()
	return reply, nil
}
