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
// watermill router, many at once: up to its concurrency across all its
// subscriptions, while messages that share an order key (see
// ConsumerDef.OrderKey: a conversation, a user) are handed over one after
// another in delivery order. A message waiting for its key or a free slot
// and a message the router works on both send InProgress, so neither is
// redelivered elsewhere; a nak on the last allowed delivery dead-letters
// the message with its reason instead of leaving it to rot; a message
// still unfinished at shutdown is naked so that it returns to the stream
// at once, and a pinned consumer's pin is given up once nothing of it is
// held here, so that another replica takes the lane without waiting out
// PinnedTTL.
//
// Shutdown has two steps: Drain stops taking messages, hands back at once
// those not yet in a handler, and lets the handlers finish, for as long as
// its context allows; Close (or the end of Subscribe's context) hands back
// whatever is still unfinished and cancels the handlers' contexts.
//
// Order holds within one process. Replicas sharing a consumer may each get
// a message of the same key; the store's version check is what keeps them
// from both applying it, not the subscriber.
type Subscriber struct {
	js      jetstream.JetStream
	service string
	defs    map[string]ConsumerDef
	log     *slog.Logger
	slots   chan struct{}
	keys    *keyQueue

	mu     sync.Mutex
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
	// draining closes when Drain begins; held counts the messages taken
	// and not yet settled or handed back, across every subscription.
	draining  chan struct{}
	drainOnce sync.Once
	held      inHand
}

var _ message.Subscriber = (*Subscriber)(nil)

// DefaultConcurrency is how many messages a Subscriber hands to its router
// at once unless told otherwise.
const DefaultConcurrency = 256

// PullWait is how long a pull request waits at the server before the
// next replaces it, and PullHeartbeat how often the server says an idle
// one is still there. A pull request lives only on its consumer's
// leader: when that node dies the request is gone with it, and nothing
// comes until the client misses two heartbeats and pulls again (from the
// new leader). With nats.go's defaults (30 s, heartbeat 15 s) that was a
// stall of up to 30 s after a NATS node's death in chaos-cluster runs;
// these bound it to about two seconds, for one small message a second
// on an idle subscription. Pinned consumers renew faster (PullRenew).
const (
	PullWait      = 10 * time.Second
	PullHeartbeat = time.Second
)

// NewSubscriber serves the given consumers (by name) for service, whose
// dead letters go to purser.dlq.<service>, with DefaultConcurrency.
func NewSubscriber(js jetstream.JetStream, service string, defs []ConsumerDef, log *slog.Logger) *Subscriber {
	m := make(map[string]ConsumerDef, len(defs))
	for _, d := range defs {
		m[d.Name] = d
	}
	return &Subscriber{js: js, service: service, defs: m, log: log, stop: make(chan struct{}), draining: make(chan struct{}),
		slots: make(chan struct{}, DefaultConcurrency), keys: newKeyQueue()}
}

// WithConcurrency sets how many messages, across every subscription, are
// in the router's hands at once (n < 1 means 1). Call it before Subscribe.
func (s *Subscriber) WithConcurrency(n int) *Subscriber {
	s.slots = make(chan struct{}, max(1, n))
	return s
}

// Subscribe starts consuming the durable consumer named topic. The channel
// closes when ctx ends or the subscriber closes.
func (s *Subscriber) Subscribe(ctx context.Context, topic string) (<-chan *message.Message, error) {
	def, ok := s.defs[topic]
	if !ok {
		return nil, fmt.Errorf("consumer %q is not provisioned for %s", topic, s.service)
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, errors.New("subscriber closed")
	}
	// Looked up without the lock, which Close takes: the lookup may wait
	// for JetStream.
	cons, err := s.consumer(ctx, def)
	s.mu.Lock()
	defer s.mu.Unlock()
	if (err != nil && ctx.Err() != nil) || s.closed {
		// Shut down before consuming began: nothing was taken, nothing to hand back.
		closed := make(chan *message.Message)
		close(closed)
		return closed, nil
	}
	if err != nil {
		return nil, fmt.Errorf("consumer %s: %w", def.Name, err)
	}
	batch := max(1, min(def.MaxAckPending, cap(s.slots)))
	opts := []jetstream.PullMessagesOpt{jetstream.PullMaxMessages(batch), jetstream.PullExpiry(PullWait), jetstream.PullHeartbeat(PullHeartbeat)}
	if def.Pinned {
		opts = append(opts[:1], jetstream.PullPriorityGroup(pinGroup), jetstream.PullExpiry(def.pullRenew()))
	}
	it, err := cons.Messages(opts...)
	if err != nil {
		return nil, fmt.Errorf("consume %s: %w", def.Name, err)
	}
	out := make(chan *message.Message)
	var handlers sync.WaitGroup
	// drained closes once the iterator is drained and closed: only then
	// are unfinished messages naked back. Before, the server could
	// redeliver one to this very iterator on its way out; after, it knows
	// nobody here pulls.
	drained := make(chan struct{})
	var drainedOnce sync.Once
	closeDrained := func() { drainedOnce.Do(func() { close(drained) }) }
	// pin is the pin id the server gave this subscription, from the
	// latest message of a pinned consumer: given up once all is handed back.
	var pin string
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		select {
		case <-ctx.Done():
		case <-s.stop:
		case <-s.draining:
		}
		it.Drain()
	}()
	go func() {
		defer s.wg.Done()
		defer func() {
			closeDrained() // before waiting: handlers hand back after it
			handlers.Wait()
			if pin != "" {
				s.unpin(def, pin)
			}
			close(out) // only when nobody can send on it
		}()
		for {
			jm, err := it.Next()
			if err != nil {
				if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
					return
				}
				if errors.Is(err, jetstream.ErrNoHeartbeat) {
					// nats.go pulls again at once; so do we. On a busy
					// machine a heartbeat may merely be late.
					s.log.Info("consume: pulling again after a missed heartbeat", "consumer", def.Name)
					continue
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
			if def.Pinned {
				if id := jm.Headers().Get(headerPinID); id != "" {
					pin = id
				}
			}
			// Queued here, by this one goroutine, so that a key's
			// messages keep their delivery order.
			var turn *keyTurn
			if key := def.orderKey(jm.Subject()); key != "" {
				turn = s.keys.join(key)
			}
			handlers.Add(1)
			s.held.add()
			go func() {
				defer handlers.Done()
				defer s.held.done()
				s.deliver(ctx, def, jm, turn, out, drained)
			}()
		}
	}()
	return out, nil
}

// consumerWait bounds how long Subscribe waits for JetStream to answer
// its consumer's lookup.
const consumerWait = 2 * time.Minute

// consumer looks def's consumer up, again while JetStream does not answer
// (a node of its cluster killed, a leader being elected), for up to
// consumerWait. A toolrunner whose router started while a NATS node was
// killed exited on "consumer toolrunner-set_rule: context deadline
// exceeded" in a chaos-cluster run.
func (s *Subscriber) consumer(ctx context.Context, def ConsumerDef) (cons jetstream.Consumer, err error) {
	err = WaitWhile(ctx, s.stop, s.log.With("consumer", def.Name), "consumer not reachable yet", consumerWait, JetStreamAway,
		func(ctx context.Context) (err error) {
			lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			cons, err = s.js.Consumer(lctx, def.Stream, def.Name)
			return err
		})
	return cons, err
}

// deliver waits for the message's turn under its key and for a free slot,
// hands it to the router and settles it with NATS. It sends InProgress
// all along, so a message that waits is not redelivered meanwhile.
//
// Draining, a message not yet in a handler is handed back, but only once
// it is first under its key: the messages of a key go back to the stream
// in their order, after the one a handler still holds is settled.
func (s *Subscriber) deliver(ctx context.Context, def ConsumerDef, jm jetstream.Msg, turn *keyTurn, out chan<- *message.Message, drained <-chan struct{}) {
	handBack := func() {
		<-drained
		_ = jm.Nak()
	}
	if turn != nil {
		defer s.keys.leave(turn)
	}
	beat := time.NewTicker(def.AckWait / 3)
	defer beat.Stop()
	if turn != nil {
		if !s.await(ctx, jm, turn.ready, beat.C) {
			handBack()
			return
		}
	}
	if s.isDraining() || !s.awaitSlot(ctx, jm, beat.C) {
		handBack()
		return
	}
	defer func() { <-s.slots }()
	wm := toWatermill(jm)
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wm.SetContext(hctx)
	for sent := false; !sent; {
		select {
		case out <- wm:
			sent = true
		case <-beat.C:
			_ = jm.InProgress()
		case <-ctx.Done():
			handBack()
			return
		case <-s.stop:
			handBack()
			return
		case <-s.draining:
			handBack()
			return
		}
	}
	for {
		select {
		case <-wm.Acked():
			// A plain ack, not a round trip: the effect is durable
			// already, and an ack the server never gets only brings the
			// message back to an idempotent handler. Waiting for the
			// server's word cost each message a request (about 5% of
			// turns/s in purser bench) and told nothing to act on.
			if err := jm.Ack(); err != nil {
				s.log.Warn("ack", "consumer", def.Name, "err", err)
			}
			return
		case <-wm.Nacked():
			if s.stopping(ctx) {
				handBack() // the handler gave up because of the shutdown
				return
			}
			s.nak(def, jm, wm)
			return
		case <-beat.C:
			_ = jm.InProgress()
		case <-ctx.Done():
			handBack() // shutting down: back to the stream now
			return
		case <-s.stop:
			handBack()
			return
		}
	}
}

// await waits for ready while keeping jm alive; false means shutdown.
func (s *Subscriber) await(ctx context.Context, jm jetstream.Msg, ready <-chan struct{}, beat <-chan time.Time) bool {
	for {
		select {
		case <-ready:
			return true
		case <-beat:
			_ = jm.InProgress()
		case <-ctx.Done():
			return false
		case <-s.stop:
			return false
		}
	}
}

// awaitSlot takes one of the subscriber's slots while keeping jm alive;
// false means shutdown or drain.
func (s *Subscriber) awaitSlot(ctx context.Context, jm jetstream.Msg, beat <-chan time.Time) bool {
	for {
		select {
		case s.slots <- struct{}{}:
			return true
		case <-beat:
			_ = jm.InProgress()
		case <-ctx.Done():
			return false
		case <-s.stop:
			return false
		case <-s.draining:
			return false
		}
	}
}

func (s *Subscriber) isDraining() bool {
	select {
	case <-s.draining:
		return true
	default:
		return false
	}
}

func (s *Subscriber) stopping(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	case <-s.stop:
		return true
	default:
		return false
	}
}

// nak redelivers with back-off, or dead-letters on the last delivery. A
// failure because the bus was unavailable is retried until the server's
// own bound: the message was not at fault.
func (s *Subscriber) nak(def ConsumerDef, jm jetstream.Msg, wm *message.Message) {
	md, err := jm.Metadata()
	limit := def.MaxDeliver
	if wm.Metadata.Get(metaBusDown) != "" {
		limit = max(def.MaxDeliver, ServerMaxDeliver) - 1
	}
	if err != nil || int(md.NumDelivered) < limit {
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

// headerPinID carries, on each message of a pinned consumer, the pin the
// server gave the puller.
const headerPinID = "Nats-Pin-Id"

// unpin gives up the pin of def's consumer if it is still pin, so that
// the next pull of another replica takes the consumer at once. It runs
// once everything this subscription took is settled or handed back: the
// messages handed back are first in line for the next holder, ahead of
// anything newer. A pin that has moved already (it outlived PinnedTTL) is
// left alone. Failing is harmless: the pin then lapses after PinnedTTL.
func (s *Subscriber) unpin(def ConsumerDef, pin string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// The naks above are published, not requested: a flush has the
	// server read them before the unpin request that follows them.
	if nc := s.js.Conn(); nc != nil {
		_ = nc.FlushWithContext(ctx)
	}
	cons, err := s.js.Consumer(ctx, def.Stream, def.Name)
	if err != nil {
		s.log.Debug("unpin", "consumer", def.Name, "err", err)
		return
	}
	held := false
	for _, g := range cons.CachedInfo().PriorityGroups {
		if g.Group == pinGroup && g.PinnedClientID == pin {
			held = true
		}
	}
	if !held {
		return
	}
	stream, err := s.js.Stream(ctx, def.Stream)
	if err == nil {
		err = stream.UnpinConsumer(ctx, def.Name, pinGroup)
	}
	if err != nil {
		s.log.Debug("unpin", "consumer", def.Name, "err", err)
	}
}

// Drain stops taking messages: every subscription stops pulling, messages
// not yet in a handler go back to their streams at once (in order per
// key), and those in a handler are left to finish until ctx ends. It then
// closes the subscriber, which hands back what is still unfinished and
// gives up pins. It returns ctx's error if the handlers had not all
// finished by then. Subscribe's context must outlive the call, or the
// handlers' contexts end with it.
func (s *Subscriber) Drain(ctx context.Context) error {
	s.drainOnce.Do(func() { close(s.draining) })
	var err error
	select {
	case <-s.held.none():
	case <-ctx.Done():
		err = ctx.Err()
	}
	_ = s.Close()
	return err
}

// Draining is closed once Drain has begun: from then on no message is
// given to a handler that was not in one already.
func (s *Subscriber) Draining() <-chan struct{} { return s.draining }

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
	// Sized for what is set below, so that it never grows while they are.
	wm.Metadata = make(message.Metadata, len(h)+4)
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

// inHand counts the messages taken from NATS and not yet settled. Unlike
// a WaitGroup it may go up from zero while Drain waits for zero (messages
// the iterator still hands over as it drains), which the race detector
// rightly reports on a WaitGroup.
type inHand struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n next reaches 0; nil while nobody waits
}

func (h *inHand) add() {
	h.mu.Lock()
	h.n++
	h.mu.Unlock()
}

func (h *inHand) done() {
	h.mu.Lock()
	h.n--
	if h.n == 0 && h.zero != nil {
		close(h.zero)
		h.zero = nil
	}
	h.mu.Unlock()
}

// none closes once no message is in hand: at once when none is now.
func (h *inHand) none() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		c := make(chan struct{})
		close(c)
		return c
	}
	if h.zero == nil {
		h.zero = make(chan struct{})
	}
	return h.zero
}
