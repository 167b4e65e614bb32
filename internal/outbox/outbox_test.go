package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/purser-ai/purser/internal/outbox"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// recorder is a publisher that remembers what it was given and can be told
// to fail on one id.
type recorder struct {
	mu     sync.Mutex
	ids    []string
	failOn string
}

func (r *recorder) Publish(topic string, msgs ...*message.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		if m.UUID == r.failOn {
			return errors.New("stream unavailable")
		}
		r.ids = append(r.ids, m.UUID)
	}
	return nil
}
func (r *recorder) Close() error { return nil }

func (r *recorder) published() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestFlushStopsAtAFailureAndKeepsTheRest(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	var msgs []store.OutboxMessage
	for _, id := range []string{"a", "b", "c"} {
		msgs = append(msgs, store.OutboxMessage{ID: id, Subject: "purser.agent.t.u.c", Payload: []byte(id), CreatedAt: now})
	}
	if err := st.AppendOutbox(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	pub := &recorder{failOn: "b"}
	relay := outbox.NewRelay(st, pub, quiet, func() time.Time { return now })
	if err := relay.Flush(ctx); err == nil {
		t.Fatal("Flush hid a publish failure")
	}
	pending, _ := st.PendingOutbox(ctx, 10)
	if len(pending) != 2 || pending[0].ID != "b" {
		t.Fatalf("pending after a failure at b = %v, want b and c still pending", pending)
	}
	pub.failOn = ""
	if err := relay.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := pub.published(); len(got) != 3 || got[0] != "a" || got[1] != "b" || got[2] != "c" {
		t.Fatalf("published %v, want a b c in order", got)
	}
	if pending, _ := st.PendingOutbox(ctx, 10); len(pending) != 0 {
		t.Fatalf("%d still pending", len(pending))
	}
}

// Run publishes what a handler stored but never published, and leaves
// fresh messages to the handler that is publishing them.
func TestRunPublishesStragglersOnly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	now := time.Now().UTC()
	old := store.OutboxMessage{ID: "old", Subject: "s", Payload: []byte("x"), CreatedAt: now.Add(-time.Minute)}
	fresh := store.OutboxMessage{ID: "fresh", Subject: "s", Payload: []byte("y"), CreatedAt: now.Add(time.Hour)}
	if err := st.AppendOutbox(ctx, []store.OutboxMessage{old, fresh}); err != nil {
		t.Fatal(err)
	}
	pub := &recorder{}
	relay := outbox.NewRelay(st, pub, quiet, time.Now)
	done := make(chan struct{})
	go func() { defer close(done); _ = relay.Run(ctx, 10*time.Millisecond) }()
	deadline := time.Now().Add(20 * time.Second)
	for len(pub.published()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // several more ticks
	cancel()
	<-done
	if got := pub.published(); len(got) != 1 || got[0] != "old" {
		t.Fatalf("Run published %v, want only the straggler", got)
	}
}

// While Run runs, Publish leaves its marks to Run, which writes many in
// one go; a clean stop writes the marks still waiting.
func TestRunWritesMarksInBatches(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	now := time.Now().UTC()
	var msgs []store.OutboxMessage
	for i := range 120 {
		msgs = append(msgs, store.OutboxMessage{ID: fmt.Sprintf("m%03d", i), Subject: "s", Payload: []byte("x"), CreatedAt: now})
	}
	if err := st.AppendOutbox(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	relay := outbox.NewRelay(st, &recorder{}, quiet, time.Now)
	done := make(chan struct{})
	go func() { defer close(done); _ = relay.Run(ctx, time.Hour) }()
	deadline := time.Now().Add(20 * time.Second)
	for !relay.Batching() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_, commits0 := st.WriteStats()
	for i := range msgs {
		if err := relay.Publish(ctx, msgs[i:i+1]); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	<-done
	if pending, _ := st.PendingOutbox(context.Background(), 200); len(pending) != 0 {
		t.Fatalf("%d messages left unmarked after Run stopped", len(pending))
	}
	if _, commits := st.WriteStats(); commits-commits0 >= int64(len(msgs)) {
		t.Fatalf("%d commits to mark %d messages published one by one: marks are not batched", commits-commits0, len(msgs))
	}
}

// Published messages do not pile up: Prune deletes those published
// longer ago than Retention, and keeps the rest.
func TestPruneDeletesWhatWasPublishedLongAgo(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	now := time.Now().UTC()
	var msgs []store.OutboxMessage
	for _, id := range []string{"a", "b", "c", "unsent"} {
		msgs = append(msgs, store.OutboxMessage{ID: id, Subject: "s", Payload: []byte(id), CreatedAt: now.Add(-time.Hour)})
	}
	if err := st.AppendOutbox(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkPublished(ctx, []string{"a", "b"}, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := st.MarkPublished(ctx, []string{"c"}, now); err != nil {
		t.Fatal(err)
	}
	relay := outbox.NewRelay(st, &recorder{failOn: "unsent"}, quiet, time.Now)
	relay.Retention = 10 * time.Minute
	if n, err := relay.Prune(ctx, now); err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want a and b, published an hour ago", n, err)
	}
	// What remains published: c alone, pruned only with a later cutoff.
	if n, err := st.PruneOutbox(context.Background(), now.Add(-time.Minute)); err != nil || n != 0 {
		t.Fatalf("%d messages published an hour ago were left for a later prune (%v)", n, err)
	}
	if n, err := st.PruneOutbox(context.Background(), now.Add(time.Minute)); err != nil || n != 1 {
		t.Fatalf("pruned %d published within Retention, want c kept until then (%v)", n, err)
	}
	if pending, _ := st.PendingOutbox(context.Background(), 10); len(pending) != 1 || pending[0].ID != "unsent" {
		t.Fatalf("pending = %v, want the unsent message kept", pending)
	}
}

// A backlog of more than a page of stragglers (published by nobody, or
// whose marks were lost) is published once each and marked while Run
// runs: the page after page of them neither repeats nor stalls the marks.
func TestRunWorksThroughABacklogOfStragglers(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	old := time.Now().UTC().Add(-time.Hour)
	var msgs []store.OutboxMessage
	for i := range 250 {
		msgs = append(msgs, store.OutboxMessage{ID: fmt.Sprintf("m%03d", i), Subject: "s", Payload: []byte("x"), CreatedAt: old})
	}
	if err := st.AppendOutbox(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	pub := &recorder{}
	relay := outbox.NewRelay(st, pub, quiet, time.Now)
	done := make(chan struct{})
	go func() { defer close(done); _ = relay.Run(ctx, 10*time.Millisecond) }()
	for deadline := time.Now().Add(30 * time.Second); ; {
		pending, err := st.PendingOutbox(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s, %d publishes and %s still pending: the backlog is republished without being marked", len(pub.published()), pending[0].ID)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if n := len(pub.published()); n != 250 {
		t.Errorf("published %d times for 250 messages, want each once", n)
	}
}
