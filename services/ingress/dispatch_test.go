package ingress

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/natstest"
)

// Each user's frames reach the hub in the order they were published,
// whatever the other users' frames in between; with the last subscription
// gone the dispatcher runs no goroutine.
func TestDispatcherKeepsEachUsersOrder(t *testing.T) {
	_, nc := natstest.Start(t)
	var mu sync.Mutex
	got := map[userKey][]string{}
	d := newDispatcher(1<<20, func(k userKey, m *nats.Msg) {
		mu.Lock()
		got[k] = append(got[k], string(m.Data))
		mu.Unlock()
	}, func(k userKey) { t.Errorf("frames of %v dropped", k) })
	users := []string{"ann", "bob", "cat"}
	subs := make([]*nats.Subscription, len(users))
	for i, u := range users {
		var err error
		if subs[i], err = d.subscribe(nc, "deliver."+u, userKey{"acme", u}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	const each = 2000
	for i := range each {
		for _, u := range users {
			if err := nc.Publish("deliver."+u, []byte(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(got[userKey{"acme", "ann"}]) + len(got[userKey{"acme", "bob"}]) + len(got[userKey{"acme", "cat"}])
		mu.Unlock()
		if n == each*len(users) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d frames delivered", n, each*len(users))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, u := range users {
		for i, f := range got[userKey{"acme", u}] {
			if f != fmt.Sprint(i) {
				t.Fatalf("%s: frame %d is %q", u, i, f)
			}
		}
	}
	for i, u := range users {
		d.unsubscribe(subs[i], "deliver."+u)
	}
	d.mu.Lock()
	done := d.moverDone
	d.mu.Unlock()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the mover still runs with no subscription")
	}
}

// Frames past a user's pending limit are dropped and reported once per
// run of drops, so that the user's sockets catch up from the store; the
// frames that fit still arrive, in order.
func TestDispatcherReportsDropsPastTheLimit(t *testing.T) {
	_, nc := natstest.Start(t)
	release := make(chan struct{})
	holding := make(chan struct{}, 10)
	var mu sync.Mutex
	var got []string
	var lost []userKey
	d := newDispatcher(100, func(k userKey, m *nats.Msg) {
		holding <- struct{}{}
		<-release // the hub is busy: frames wait in the queue
		mu.Lock()
		got = append(got, string(m.Data))
		mu.Unlock()
	}, func(k userKey) {
		mu.Lock()
		lost = append(lost, k)
		mu.Unlock()
	})
	ann := userKey{"acme", "ann"}
	sub, err := d.subscribe(nc, "deliver.ann", ann)
	if err != nil {
		t.Fatal(err)
	}
	defer d.unsubscribe(sub, "deliver.ann")
	frame := func(i int) []byte { return fmt.Appendf(nil, "%050d", i) } // 50 bytes
	// The frames are pushed as the mover would, so that none is still on
	// its way when the test looks. 1 goes to the hub, which holds it; 2
	// and 3 wait (100 bytes); 4 and 5 are one run of drops.
	push := func(i int) { d.push(&nats.Msg{Subject: "deliver.ann", Data: frame(i)}) }
	push(1)
	<-holding
	for i := 2; i <= 5; i++ {
		push(i)
	}
	deadline := time.Now().Add(20 * time.Second)
	mu.Lock()
	if len(lost) != 1 {
		t.Errorf("lost reported %d times, want once", len(lost))
	}
	mu.Unlock()
	close(release)
	delivered := func(want int) {
		t.Helper()
		for {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d frames delivered, want %d", n, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	delivered(3)
	// With the queue drained, the next frame fits again.
	push(6)
	delivered(4)
	mu.Lock()
	defer mu.Unlock()
	for i, want := range []int{1, 2, 3, 6} {
		if got[i] != string(frame(want)) {
			t.Fatalf("frame %d = %s, want %s", i, got[i], frame(want))
		}
	}
	if len(lost) != 1 || lost[0] != ann {
		t.Fatalf("lost = %v, want [%v] once", lost, ann)
	}
}
