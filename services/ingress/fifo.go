package ingress

// fifo is a first-in, first-out queue whose memory goes back as it
// drains: once at least compactAfter items were taken and they are half
// of its slice, the rest moves to the front; empty, it holds nothing.
// The caller guards it.
type fifo[T any] struct {
	items        []T
	head         int
	compactAfter int
}

func (q *fifo[T]) push(v T) { q.items = append(q.items, v) }

func (q *fifo[T]) len() int { return len(q.items) - q.head }

// peek returns the oldest item without taking it; ok is false when there
// is none.
func (q *fifo[T]) peek() (v T, ok bool) {
	if q.head == len(q.items) {
		return v, false
	}
	return q.items[q.head], true
}

// reset drops every item and the memory that held them.
func (q *fifo[T]) reset() { q.items, q.head = nil, 0 }

// pop takes the oldest item; ok is false when there is none.
func (q *fifo[T]) pop() (v T, ok bool) {
	if q.head == len(q.items) {
		q.reset()
		return v, false
	}
	v = q.items[q.head]
	var zero T
	q.items[q.head] = zero
	q.head++
	if q.head >= q.compactAfter && 2*q.head >= len(q.items) {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return v, true
}
