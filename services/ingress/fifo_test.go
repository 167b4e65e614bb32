package ingress

import "testing"

// Frames leave a socket's queue in the order they came, through the
// compactions that give its memory back, and a drained queue holds none.
func TestFIFOKeepsOrderAndGivesMemoryBack(t *testing.T) {
	q := fifo[int]{compactAfter: 4}
	next, want := 0, 0
	// take pops one item, checks it is the next in order, and says
	// whether there was one.
	take := func() bool {
		t.Helper()
		v, ok := q.pop()
		if ok && v != want {
			t.Fatalf("popped %d, want %d", v, want)
		}
		if ok {
			want++
		}
		return ok
	}
	for round := range 50 {
		for range round%7 + 1 {
			q.push(next)
			next++
		}
		for range round%5 + 1 {
			take()
		}
		if q.len() != next-want {
			t.Fatalf("len %d, want %d", q.len(), next-want)
		}
		if q.head > q.compactAfter && 2*q.head > len(q.items) {
			t.Fatalf("round %d: %d taken items of %d still held", round, q.head, len(q.items))
		}
	}
	for take() {
	}
	if want != next || q.items != nil {
		t.Fatalf("drained %d of %d; still holds %d slots", want, next, cap(q.items))
	}
}
