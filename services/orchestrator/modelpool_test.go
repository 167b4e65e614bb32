package orchestrator

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// With every slot taken by one tenant, the next free slot goes to another
// tenant that waits, not to the first tenant's next call.
func TestModelPoolSharesSlotsBetweenTenants(t *testing.T) {
	p := newModelPool(2)
	defer p.close()
	release := make(chan struct{})
	var once sync.Once
	defer once.Do(func() { close(release) }) // before close, or a failure would hang
	ran := make(chan string, 20)
	job := func(name string) func() {
		return func() {
			ran <- name
			<-release
		}
	}
	for i := range 6 {
		p.submit("big", job("big"+string(rune('0'+i))))
	}
	p.submit("small", job("small"))
	for range 2 {
		<-ran // the two slots, both big's
	}
	if q := p.queued(); q != 5 {
		t.Fatalf("%d queued, want 5", q)
	}
	release <- struct{}{} // one slot frees
	select {
	case got := <-ran:
		if got != "small" {
			t.Fatalf("the freed slot went to %s, want the waiting tenant small", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no job ran after a slot freed")
	}
	once.Do(func() { close(release) })
}

// A closed pool drops what waits and refuses more.
func TestModelPoolCloseDropsQueued(t *testing.T) {
	p := newModelPool(1)
	release := make(chan struct{})
	started := make(chan struct{})
	p.submit("a", func() { close(started); <-release })
	ran := false
	p.submit("a", func() { ran = true })
	<-started
	go func() {
		for p.queued() != 0 || !p.isClosed() {
			runtime.Gosched()
		}
		close(release) // only once close has dropped the queue
	}()
	p.close()
	if ran {
		t.Fatal("a queued job ran after close")
	}
	if p.submit("a", func() {}) {
		t.Fatal("a closed pool took a job")
	}
}
