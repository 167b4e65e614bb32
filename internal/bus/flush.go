package bus

import (
	"errors"
	"time"

	"github.com/nats-io/nats.go"
)

// flushLimit bounds how long FlushSubscriptions waits for a server that
// is away (a cluster losing the node the connection was on, then
// reconnecting to another).
const flushLimit = 2 * time.Minute

// FlushSubscriptions waits until the server has seen the subscriptions
// made on nc so far. nats.go answers a flush that a reconnect interrupts
// with ErrConnectionClosed although the connection lives on and sends its
// subscriptions again to the next server; such a flush is tried again
// there, so that a service starting while a NATS node goes down comes up
// instead of exiting. A connection that is really closed, or a server
// that does not answer within flushLimit, fails.
func FlushSubscriptions(nc *nats.Conn) error {
	deadline := time.Now().Add(flushLimit)
	for {
		err := nc.FlushTimeout(10 * time.Second)
		if err == nil || nc.IsClosed() || time.Now().After(deadline) {
			return err
		}
		if !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrTimeout) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}
