package bus_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
)

// orderedConsumer orders purser.notify.t1.<user> by user.
func orderedConsumer(name string) bus.ConsumerDef {
	d := testConsumer(name)
	d.MaxAckPending = 64
	d.OrderKey = []int{2, 3}
	return d
}

// Messages of different keys are in the handler at the same time: the
// handler below returns only once all of them have entered it, which a
// subscriber handing over one message at a time would never allow.
func TestMessagesOfDifferentKeysAreHandledAtOnce(t *testing.T) {
	def := orderedConsumer("wide")
	e := newEnv(t, def)
	const n = 10
	var entered sync.WaitGroup
	entered.Add(n)
	all := make(chan struct{})
	go func() { entered.Wait(); close(all) }()
	done := make(chan string, n)
	e.serve("svc", def, func(m *message.Message) error {
		entered.Done()
		<-all
		done <- m.UUID
		return nil
	})
	for i := range n {
		e.publish(fmt.Sprintf("purser.notify.t1.u%d", i), fmt.Sprintf("m%d", i), `{}`)
	}
	for range n {
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the handler never saw every message at once")
		}
	}
}

// Messages of one key are handled one at a time, in the order they were
// published, and a message waiting behind a slow one (longer than three
// ack waits) is kept alive, not redelivered.
func TestMessagesOfOneKeyAreHandledInOrderOneAtATime(t *testing.T) {
	def := orderedConsumer("narrow")
	def.AckWait = time.Second
	e := newEnv(t, def)
	var mu sync.Mutex
	var order []string
	done := make(chan struct{})
	const n = 12
	e.serve("svc", def, func(m *message.Message) error {
		mu.Lock()
		first := len(order) == 0
		mu.Unlock()
		if first {
			time.Sleep(3500 * time.Millisecond) // 3.5 ack waits: the others wait behind it
		}
		mu.Lock()
		order = append(order, m.UUID)
		if len(order) == 2*n {
			close(done)
		}
		mu.Unlock()
		return nil
	})
	var want []string
	for i := range n {
		id := fmt.Sprintf("k%02d", i)
		want = append(want, id)
		e.publish("purser.notify.t1.same", id, `{}`)
		e.publish(fmt.Sprintf("purser.notify.t1.other%d", i), "o"+id, `{}`)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("messages of one key were not all handled")
	}
	mu.Lock()
	defer mu.Unlock()
	var same []string
	for _, id := range order {
		if strings.HasPrefix(id, "k") {
			same = append(same, id)
		}
	}
	if strings.Join(same, ",") != strings.Join(want, ",") {
		t.Errorf("key handled in order %v, want %v (each once)", same, want)
	}
}

// The handler never holds two messages of one key at once.
func TestOneKeyNeverHasTwoMessagesInTheHandler(t *testing.T) {
	def := orderedConsumer("single")
	e := newEnv(t, def)
	var mu sync.Mutex
	inside := map[string]int{}
	worst := 0
	var handled sync.WaitGroup
	const perKey = 15
	handled.Add(perKey * 3)
	e.serve("svc", def, func(m *message.Message) error {
		key := m.Metadata.Get(bus.MetaSubject)
		mu.Lock()
		inside[key]++
		worst = max(worst, inside[key])
		mu.Unlock()
		time.Sleep(2 * time.Millisecond) // give an overlap the chance to show
		mu.Lock()
		inside[key]--
		mu.Unlock()
		handled.Done()
		return nil
	})
	for i := range perKey {
		for _, u := range []string{"a", "b", "c"} {
			e.publish("purser.notify.t1."+u, fmt.Sprintf("%s%d", u, i), `{}`)
		}
	}
	finished := make(chan struct{})
	go func() { handled.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(30 * time.Second):
		t.Fatal("not every message was handled")
	}
	if worst != 1 {
		t.Fatalf("%d messages of one key were in the handler at once, want 1", worst)
	}
}

// A message that keeps failing holds only its own key: another key's
// message is handled while the poisoned one is still in the handler, and
// the poisoned one still ends in the dead-letter queue.
func TestPoisonedMessageDoesNotHoldOtherKeys(t *testing.T) {
	def := orderedConsumer("poison")
	e := newEnv(t, def)
	other := make(chan struct{})
	var once sync.Once
	e.serve("svc", def, func(m *message.Message) error {
		if m.Metadata.Get(bus.MetaSubject) == "purser.notify.t1.victim" {
			once.Do(func() { close(other) })
			return nil
		}
		// The poisoned message waits for the other user's message before
		// failing: if it held the consumer, that message could never run.
		select {
		case <-other:
		case <-time.After(20 * time.Second):
			return bus.Permanent(errors.New("the other key never ran"))
		}
		return errors.New("invalid byte sequence for encoding \"UTF8\": 0x00")
	})
	e.publish("purser.notify.t1.poisoner", "poison", `{}`)
	e.publish("purser.notify.t1.victim", "hello", `{}`)
	dl := dlqMessages(t, e.js, "svc", 1)
	if reason := dl[0].Headers().Get(bus.HeaderDLQReason); !strings.Contains(reason, "0x00") {
		t.Fatalf("dead letter reason %q: the poisoned message must fail on its own, after the other key ran", reason)
	}
}

// WithConcurrency bounds the messages in the handler at once.
func TestConcurrencyIsBounded(t *testing.T) {
	def := orderedConsumer("bounded")
	e := newEnv(t, def)
	js := e.js
	sub := bus.NewSubscriber(js, "svc", []bus.ConsumerDef{def}, quiet).WithConcurrency(3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	defer sub.Close()
	msgs, err := sub.Subscribe(ctx, def.Name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		e.publish(fmt.Sprintf("purser.notify.t1.u%d", i), fmt.Sprintf("b%d", i), `{}`)
	}
	var held []*message.Message
	for range 3 {
		select {
		case m := <-msgs:
			held = append(held, m)
		case <-time.After(20 * time.Second):
			t.Fatal("fewer than 3 messages handed over")
		}
	}
	select {
	case m := <-msgs:
		t.Fatalf("a 4th message (%s) was handed over while 3 were unsettled", m.UUID)
	case <-time.After(300 * time.Millisecond):
		// Nothing more arrives while the three are held: this wait only
		// gives a wrong fourth message the time to show itself.
	}
	held[0].Ack()
	select {
	case <-msgs:
	case <-time.After(20 * time.Second):
		// Seen once in CI and not reproduced since: the goroutines say
		// where the slot (or the next message) is held.
		buf := make([]byte, 1<<20)
		t.Fatalf("settling one message did not free its slot; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
	}
}

// A pinned consumer shared by two processes still hands one key's
// messages over in order: one process at a time takes them.
func TestPinnedConsumerKeepsOrderAcrossProcesses(t *testing.T) {
	def := orderedConsumer("pinned")
	def.Pinned = true
	e := newEnv(t, def)
	var mu sync.Mutex
	var order []string
	done := make(chan struct{})
	const n = 30
	h := func(m *message.Message) error {
		time.Sleep(time.Millisecond) // room for another process to overtake, were it allowed to
		mu.Lock()
		defer mu.Unlock()
		order = append(order, m.UUID)
		if len(order) == n {
			close(done)
		}
		return nil
	}
	e.serve("svc-a", def, h)
	e.serve("svc-b", def, h)
	var want []string
	for i := range n {
		id := fmt.Sprintf("p%02d", i)
		want = append(want, id)
		e.publish("purser.notify.t1.same", id, `{}`)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("not every message was handled")
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("handled in order %v, want %v", order, want)
	}
}

// A lane consumer made before lanes were pinned is replaced by a pinned
// one at provisioning, keeping the messages it had not delivered.
func TestProvisionPinsAnOldConsumer(t *testing.T) {
	old := bus.OrchestratorConsumers()[0]
	old.Pinned = false
	e := newEnv(t, old)
	e.publish("purser.turns.t1.c1", "waiting", `{}`)
	pinned := bus.OrchestratorConsumers()
	ctx := context.Background()
	if err := bus.Provision(ctx, e.js, pinned...); err != nil {
		t.Fatalf("provision over an unpinned consumer: %v", err)
	}
	c, err := e.js.Consumer(ctx, old.Stream, old.Name)
	if err != nil {
		t.Fatal(err)
	}
	if c.CachedInfo().Config.PriorityPolicy != jetstream.PriorityPolicyPinned {
		t.Fatalf("consumer %s not pinned", old.Name)
	}
	total := uint64(0)
	for _, d := range pinned[:bus.TurnPartitions] {
		c, err := e.js.Consumer(ctx, d.Stream, d.Name)
		if err != nil {
			t.Fatal(err)
		}
		total += c.CachedInfo().NumPending
	}
	if total != 1 {
		t.Fatalf("%d turns pending over the lanes, want the 1 published before", total)
	}
}
