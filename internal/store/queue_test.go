package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"
)

// Every request put is answered, handled in a batch or refused at close,
// however put and close interleave, and a put after close is refused at
// once: no caller waits for ever.
func TestQueueAnswersEveryRequest(t *testing.T) {
	for range 200 {
		q := newQueue[int](4)
		var mu sync.Mutex
		answered := map[int]int{}
		answer := func(r int) {
			mu.Lock()
			answered[r]++
			mu.Unlock()
		}
		go q.run(func(batch []int) {
			if len(batch) > 4 {
				t.Errorf("a batch of %d, bound 4", len(batch))
			}
			for _, r := range batch {
				answer(r)
			}
		}, answer)
		var wg sync.WaitGroup
		var refused sync.Map
		for i := range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := q.put(context.Background(), i); err != nil {
					if !errors.Is(err, errStoreClosed) {
						t.Errorf("put: %v", err)
					}
					refused.Store(i, true)
				}
			}()
		}
		q.close()
		wg.Wait()
		if err := q.put(context.Background(), 99); !errors.Is(err, errStoreClosed) {
			t.Fatalf("put after close: %v", err)
		}
		for i := range 20 {
			_, wasRefused := refused.Load(i)
			if n := answered[i]; (n == 1) == wasRefused || n > 1 {
				t.Fatalf("request %d answered %d times, refused at put: %v", i, n, wasRefused)
			}
		}
	}
}

// A busy queue waits for a fuller batch; one that was not busy hands a
// lone request over at once, and a batch that is full only because it
// waited does not make the next one wait. The wait is an hour, so a queue
// that waited when it should not have fails at next's bound.
func TestQueueGathersOnlyWhenBusy(t *testing.T) {
	q := newQueue[int](16)
	q.gather = gathering{busy: 3, full: 4, wait: time.Hour}
	batches := make(chan []int, 10)
	go q.run(func(batch []int) { batches <- slices.Clone(batch) }, func(int) {})
	// The queues are closed only at the end: a close waits for the batch
	// being gathered, so after a failure it would wait out the hour.
	put := func(rs ...int) {
		for _, r := range rs {
			if err := q.put(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	next := func() []int {
		select {
		case b := <-batches:
			return b
		case <-time.After(30 * time.Second): // a bound on a hang, not a speed claim
			t.Fatal("no batch handed over")
			return nil
		}
	}

	// Not busy yet: each lone request is a batch of its own, at once.
	put(1)
	if b := next(); !slices.Equal(b, []int{1}) {
		t.Fatalf("first batch %v, want [1]", b)
	}
	put(2)
	if b := next(); !slices.Equal(b, []int{2}) {
		t.Fatalf("second batch %v, want [2]", b)
	}

	// Requests that all queue while the writer is held make a busy batch.
	hold, holding := make(chan struct{}), make(chan struct{})
	q2 := newQueue[int](16)
	q2.gather = q.gather
	held := false
	go q2.run(func(batch []int) {
		if !held {
			held = true
			close(holding)
			<-hold
		}
		batches <- slices.Clone(batch)
	}, func(int) {})
	put2 := func(rs ...int) {
		for _, r := range rs {
			if err := q2.put(context.Background(), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	put2(10) // taken, and held
	<-holding
	put2(11, 12, 13)
	close(hold)
	if b := next(); !slices.Equal(b, []int{10}) {
		t.Fatalf("held batch %v, want [10]", b)
	}
	if b := next(); !slices.Equal(b, []int{11, 12, 13}) {
		t.Fatalf("batch %v, want [11 12 13]", b)
	}
	// Busy now: a lone request waits for company until the batch is full.
	put2(14)
	select {
	case b := <-batches:
		t.Fatalf("a busy queue handed over %v alone", b)
	case <-time.After(100 * time.Millisecond):
	}
	put2(15, 16, 17)
	if b := next(); !slices.Equal(b, []int{14, 15, 16, 17}) {
		t.Fatalf("gathered batch %v, want [14 15 16 17]", b)
	}
	// Only 14 was waiting when that batch was taken: what the wait
	// gathered does not count as busy, so the next request goes at once.
	put2(18)
	if b := next(); !slices.Equal(b, []int{18}) {
		t.Fatalf("after a gathered batch, %v, want [18] at once", b)
	}
	q.close()
	q2.close()
}
