package bus

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// publishTimeout bounds waiting for a stream's ack.
const publishTimeout = 10 * time.Second

// Publisher publishes watermill messages to NATS. Subjects under a stream
// go through JetStream and wait for the stream's ack, with the message
// UUID as Nats-Msg-Id; purser.deliver.* goes out on core NATS. It does not
// own the connection it was given.
type Publisher struct {
	nc *nats.Conn
	js jetstream.JetStream
}

var _ message.Publisher = (*Publisher)(nil)

// NewPublisher returns a publisher over nc and js.
func NewPublisher(nc *nats.Conn, js jetstream.JetStream) *Publisher {
	return &Publisher{nc: nc, js: js}
}

// Publish sends msgs to topic (a full subject) in order, stopping at the
// first failure.
func (p *Publisher) Publish(topic string, msgs ...*message.Message) error {
	core := strings.HasPrefix(topic, "purser.deliver.")
	for _, m := range msgs {
		nm := toNATS(topic, m, !core)
		if core {
			if err := p.nc.PublishMsg(nm); err != nil {
				return fmt.Errorf("publish %s: %w", topic, err)
			}
			continue
		}
		ctx, cancel := context.WithTimeout(m.Context(), publishTimeout)
		_, err := p.js.PublishMsg(ctx, nm)
		cancel()
		if err != nil {
			return fmt.Errorf("publish %s: %w", topic, err)
		}
	}
	return nil
}

// PublishDedup publishes m to a stream subject and reports whether the
// stream dropped it as a duplicate of an earlier message with the same id
// (within the stream's duplicate window).
func (p *Publisher) PublishDedup(topic string, m *message.Message) (duplicate bool, err error) {
	nm := toNATS(topic, m, true)
	ctx, cancel := context.WithTimeout(m.Context(), publishTimeout)
	defer cancel()
	ack, err := p.js.PublishMsg(ctx, nm)
	if err != nil {
		return false, fmt.Errorf("publish %s: %w", topic, err)
	}
	return ack.Duplicate, nil
}

// Close does nothing: the connection belongs to the caller.
func (p *Publisher) Close() error { return nil }

// toNATS makes m a NATS message on subject, its metadata the headers (but
// the subscriber's own), with Nats-Msg-Id its UUID when withID (a
// stream's message). The headers' values share one array: a header set
// one by one is a slice each, seven or so a message.
func toNATS(subject string, m *message.Message, withID bool) *nats.Msg {
	h := make(nats.Header, len(m.Metadata)+1)
	vals := make([]string, 0, len(m.Metadata)+1)
	for k, v := range m.Metadata {
		if strings.HasPrefix(k, metaPrefix) || k == metaLastError || k == HeaderMsgID {
			continue
		}
		vals = append(vals, v)
		h[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	if withID {
		vals = append(vals, m.UUID)
		h[HeaderMsgID] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	return &nats.Msg{Subject: subject, Data: m.Payload, Header: h}
}
