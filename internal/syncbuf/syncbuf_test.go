package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Writers and a reader at once lose nothing (and, under -race, race on
// nothing): every line written is in the buffer once.
func TestWritesFromManyGoroutines(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				_, _ = b.Write([]byte("line\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "line\n"); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
}
