package orchestrator

import (
	"sync"

	"github.com/purser-ai/purser/internal/warm"
)

// modelPool runs model calls, at most limit at once. When every slot is
// taken, waiting calls are queued per tenant and a freed slot goes to the
// waiting tenant with the fewest calls running (the longest waiting among
// equals), so one tenant with many calls cannot starve another with one.
// It owns the goroutines it starts (warm ones: a model call's path is
// deep); close drops what still waits and
// waits for what runs.
type modelPool struct {
	limit int

	mu      sync.Mutex
	running int
	closed  bool
	queues  map[string][]func()
	ring    []string       // tenants with queued calls, in turn order
	busy    map[string]int // calls running, by tenant
	wg      sync.WaitGroup
}

func newModelPool(limit int) *modelPool {
	return &modelPool{limit: max(1, limit), queues: make(map[string][]func()), busy: make(map[string]int)}
}

// submit runs job for tenant now if a slot is free, or queues it; false
// means the pool is closed and job will never run.
func (p *modelPool) submit(tenant string, job func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.running < p.limit {
		p.running++
		p.busy[tenant]++
		p.wg.Add(1)
		warm.Go(func() { p.work(tenant, job) })
		return true
	}
	if len(p.queues[tenant]) == 0 {
		p.ring = append(p.ring, tenant)
	}
	p.queues[tenant] = append(p.queues[tenant], job)
	return true
}

// work runs job, then queued jobs in fair order, until none wait.
func (p *modelPool) work(tenant string, job func()) {
	defer p.wg.Done()
	for job != nil {
		job()
		tenant, job = p.next(tenant)
	}
}

// next ends a call of done and picks the next call to run in its slot.
func (p *modelPool) next(done string) (string, func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy[done]--; p.busy[done] == 0 {
		delete(p.busy, done)
	}
	if len(p.ring) == 0 || p.closed {
		p.running--
		return "", nil
	}
	pick := 0
	for i, t := range p.ring {
		if p.busy[t] < p.busy[p.ring[pick]] {
			pick = i
		}
	}
	tenant := p.ring[pick]
	p.ring = append(p.ring[:pick:pick], p.ring[pick+1:]...)
	q := p.queues[tenant]
	job := q[0]
	if len(q) == 1 {
		delete(p.queues, tenant)
	} else {
		p.queues[tenant] = q[1:]
		p.ring = append(p.ring, tenant)
	}
	p.busy[tenant]++
	return tenant, job
}

// queued is how many jobs wait for a slot.
func (p *modelPool) queued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, q := range p.queues {
		n += len(q)
	}
	return n
}

// close drops queued jobs and waits for running ones.
func (p *modelPool) close() {
	p.mu.Lock()
	p.closed = true
	p.queues = map[string][]func(){}
	p.ring = nil
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *modelPool) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}
