package toolrunner_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/services/toolrunner"
)

func limiters(t *testing.T, n int) ([]*toolrunner.KVLimiter, jetstream.KeyValue) {
	t.Helper()
	_, nc := natstest.Start(t)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out []*toolrunner.KVLimiter
	for range n {
		l, err := toolrunner.NewKVLimiter(ctx, js, 1)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	kv, err := js.KeyValue(ctx, toolrunner.RateLimitBucket)
	if err != nil {
		t.Fatal(err)
	}
	return out, kv
}

// Two replicas taking turns on one user's calls each remember a count the
// other has since moved past: the limit still lets exactly its number of
// calls through, and the shared counter says so.
func TestRateLimitStaysExactWhenReplicasTakeTurns(t *testing.T) {
	ls, kv := limiters(t, 2)
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 10, 0, 5, 0, time.UTC)
	const limit = 5
	allowed := 0
	for i := range 12 {
		ok, retry, err := ls[i%2].Allow(ctx, "acme.ann.list_expenses", limit, now)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			allowed++
		} else if retry != 55*time.Second {
			t.Errorf("call %d: retry after %v, want 55s", i, retry)
		}
	}
	if allowed != limit {
		t.Fatalf("%d calls allowed, want %d", allowed, limit)
	}
	e, err := kv.Get(ctx, "acme.ann.list_expenses."+strconv.FormatInt(now.Unix()/60, 10))
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Value()) != "5" {
		t.Fatalf("shared counter = %s, want 5", e.Value())
	}
}

// A user's calls past the limit are refused for the rest of the minute
// (by the count this replica remembers), and neither the next minute nor
// another user is held to that count.
func TestRateLimitCountsEachMinuteAndUserApart(t *testing.T) {
	ls, _ := limiters(t, 1)
	l := ls[0]
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 10, 0, 30, 0, time.UTC)
	for i := range 3 {
		ok, _, err := l.Allow(ctx, "acme.ann.add_expense", 2, now)
		if err != nil {
			t.Fatal(err)
		}
		if ok != (i < 2) {
			t.Fatalf("call %d allowed = %v", i, ok)
		}
	}
	ok, _, err := l.Allow(ctx, "acme.ann.add_expense", 2, now.Add(time.Minute))
	if err != nil || !ok {
		t.Fatalf("the next minute's first call: allowed %v, %v", ok, err)
	}
	// Another user's budget is their own.
	if ok, _, err := l.Allow(ctx, "acme.bob.add_expense", 2, now); err != nil || !ok {
		t.Fatalf("bob's first call: allowed %v, %v", ok, err)
	}
}
