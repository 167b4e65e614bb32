package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Subscriber delivers messages of provisioned durable consumers to a
// watermill router, one message in flight per subscription. While the
// router works on a message it sends InProgress, so a slow handler is not
// redelivered elsewhere; an ack waits for the server's confirmation; a nak
// on the last allowed delivery dead-letters the message with its reason
// instead of leaving it to rot; a message still unfinished at shutdown is
// naked so that it returns to the stream at once.
type Subscriber struct {
	js      jetstream.JetStream
	service string
	defs    map[string]ConsumerDef
	log     *slog.Logger

	mu     sync.Mutex
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

var _ message.Subscriber = (*Subscriber)(nil)

// NewSubscriber serves the given consumers (by name) for service, whose
// dead letters go to purser.dlq.<service>.
func NewSubscriber(js jetstream.JetStream, service string, defs []ConsumerDef, log *slog.Logger) *Subscriber {
	m := make(map[string]ConsumerDef, len(defs))
	for _, d := range defs {
		m[d.Name] = d
	}
	return &Subscriber{js: js, service: service, defs: m, log: log, stop: make(chan struct{})}
}

// Subscribe starts consuming the durable consumer named topic. The channel
// closes when ctx ends or the subscriber closes.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	def, ok := s.defs[topic]
	if !ok {
		return nil, fmt.Errorf("consumer %q is not provisioned for %s", topic, s.service)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("subscriber closed")
	}
	cons, err := s.js.Consumer(ctx, def.Stream, def.Name)
	if err != nil && ctx.Err() != nil {
		// Shut down before consuming began: nothing was taken, nothing to hand back.
		closed := make(chan *message.Message)
		close(closed)
		return closed, nil
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", def.Name, err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(1))
	if err != nil {
		return nil, fmt.Errorf("consume %s: %w", def.Name, err)
	}
	out := make(chan *message.Message)
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		select {
		case <-ctx.Done():
		case <-s.stop:
		}
		it.Stop()
	}()
	go func() {
		defer s.wg.Done()
		defer close(out)
		for {
			jm, err := it.Next()
			if err != nil {
				if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					return
				}
				s.log.Warn("consume", "consumer", def.Name, "err", err)
				select {
				case <-ctx.Done():
					return
				case <-s.stop:
					return
				case <-time.After(time.Second):
				}
				continue
			}
			s.deliver(ctx, def, jm, out)
		}
	}()
	return out, nil
}

// deliver hands one message to the router and settles it with NATS.
func (s *Subscriber) deliver(ctx context.Context, def ConsumerDef, jm jetstream.Msg, out chan<- *message.Message) {
	wm := toWatermill(jm)
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wm.SetContext(hctx)
	select {
	case out <- wm:
	case <-ctx.Done():
		_ = jm.Nak()
		return
	case <-s.stop:
		_ = jm.Nak()
		return
	}
	beat := time.NewTicker(def.AckWait / 3)
	defer beat.Stop()
	for {
		select {
		case <-wm.Acked():
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			if err := jm.DoubleAck(actx); err != nil {
				s.log.Warn("ack", "consumer", def.Name, "err", err)
			}
			cancel()
			return
		case <-wm.Nacked():
			s.nak(def, jm, wm)
			return
		case <-beat.C:
			_ = jm.InProgress()
		case <-ctx.Done():
			_ = jm.Nak() // shutting down: back to the stream now
			return
		case <-s.stop:
			_ = jm.Nak()
			return
		}
	}
}

// nak redelivers with back-off, or dead-letters on the last delivery.
func (s *Subscriber) nak(def ConsumerDef, jm jetstream.Msg, wm *message.Message) {
	md, err := jm.Metadata()
	if err != nil || int(md.NumDelivered) < def.MaxDeliver {
		delivered := 1
		if err == nil {
			delivered = int(md.NumDelivered)
		}
		_ = jm.NakWithDelay(def.backOff(delivered))
		return
	}
	reason := "max deliveries reached"
	if last := wm.Metadata.Get(metaLastError); last != "" {
		reason += ": " + last
	}
	if err := s.deadLetter(jm, reason); err != nil {
		s.log.Error("dead letter", "consumer", def.Name, "err", err)
		_ = jm.NakWithDelay(def.backOff(def.MaxDeliver))
		return
	}
	_ = jm.Term()
}

func (s *Subscriber) deadLetter(jm jetstream.Msg, reason string) error {
	subject, err := DLQSubject(s.service)
	if err != nil {
		return err
	}
	nm := nats.NewMsg(subject)
	nm.Data = jm.Data()
	for k, v := range jm.Headers() {
		nm.Header[k] = v
	}
	nm.Header.Set(HeaderDLQReason, reason)
	nm.Header.Set(HeaderDLQSubject, jm.Subject())
	if id := jm.Headers().Get(HeaderMsgID); id != "" {
		nm.Header.Set(HeaderMsgID, id+"-dlq")
	}
	ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
	defer cancel()
	_, err = s.js.PublishMsg(ctx, nm)
	return err
}

// Close stops every subscription and waits for their goroutines; messages
// not yet settled are naked back to their streams.
func (s *Subscriber) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

func toWatermill(jm jetstream.Msg) *message.Message {
	h := jm.Headers()
	id := h.Get(HeaderMsgID)
	md, err := jm.Metadata()
	if id == "" && err == nil {
		id = jm.Subject() + "-" + strconv.FormatUint(md.Sequence.Stream, 10)
	}
	wm := message.NewMessage(id, jm.Data())
	for k, v := range h {
		if len(v) > 0 && k != HeaderMsgID {
			wm.Metadata.Set(k, v[0])
		}
	}
	wm.Metadata.Set(MetaSubject, jm.Subject())
	if err == nil {
		wm.Metadata.Set(MetaNumDelivered, strconv.FormatUint(md.NumDelivered, 10))
		wm.Metadata.Set(MetaStreamSeq, strconv.FormatUint(md.Sequence.Stream, 10))
	}
	if c := h.Get(HeaderCorrelation); c != "" {
		wm.Metadata.Set("correlation_id", c)
	}
	return wm
}
