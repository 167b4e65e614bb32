package bus

import "sync"

// keyQueue lets one holder per key run at a time, in the order they
// queued: the messages of one conversation are handled one after another,
// in stream order, while other conversations run alongside. Waiters are
// queued by the single reading goroutine, so queue order is delivery order.
type keyQueue struct {
	mu   sync.Mutex
	keys map[string][]*keyTurn
}

// keyTurn is one place in a key's queue; ready closes when it is first.
type keyTurn struct {
	key   string
	ready chan struct{}
}

func newKeyQueue() *keyQueue { return &keyQueue{keys: make(map[string][]*keyTurn)} }

// join queues a place under key; its ready channel is closed at once when
// nobody holds the key.
func (q *keyQueue) join(key string) *keyTurn {
	t := &keyTurn{key: key, ready: make(chan struct{})}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.keys[key] = append(q.keys[key], t)
	if len(q.keys[key]) == 1 {
		close(t.ready)
	}
	return t
}

// leave gives up a place, held or still waiting; the next in line, if the
// place was the first, is let in.
func (q *keyQueue) leave(t *keyTurn) {
	q.mu.Lock()
	defer q.mu.Unlock()
	line := q.keys[t.key]
	for i, w := range line {
		if w != t {
			continue
		}
		line = append(line[:i:i], line[i+1:]...)
		if len(line) == 0 {
			delete(q.keys, t.key)
			return
		}
		q.keys[t.key] = line
		if i == 0 {
			close(line[0].ready)
		}
		return
	}
}
