package store

import (
	"context"
	"errors"
	"sync"
	"testing"
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
