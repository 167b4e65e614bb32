package bus_test

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
)

// A service subscribing while its NATS node goes away (the connection
// moving on to another) must not take the flush that the disconnect
// interrupted for a closed connection: a toolrunner exited at start with
// "nats: connection closed" in a chaos-cluster run. Here the server's
// answers are held back while the flush waits, the connection is cut,
// and the client reconnects; the flush must succeed and the subscription
// work.
func TestFlushSubscriptionsOutlivesAReconnect(t *testing.T) {
	s, _ := natstest.Start(t)
	p := newHoldingProxy(t, s.Addr().String())
	nc, err := nats.Connect("nats://"+p.addr, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	got := make(chan *nats.Msg, 1)
	if _, err := nc.Subscribe("purser.test.flush", func(m *nats.Msg) { got <- m }); err != nil {
		t.Fatal(err)
	}
	p.hold(true)
	flushed := make(chan error, 1)
	go func() { flushed <- bus.FlushSubscriptions(nc) }()
	time.Sleep(200 * time.Millisecond) // the flush's PING is out, its PONG held
	p.cut()                            // the PONG never comes on this connection
	p.hold(false)
	if err := <-flushed; err != nil {
		t.Fatalf("flush across a reconnect: %v", err)
	}
	// Published by another client, straight to the server, until it
	// arrives: the subscription was sent again on the new connection.
	other := natstest.Connect(t, s, "publisher")
	deadline := time.Now().Add(20 * time.Second)
	for {
		if err := other.Publish("purser.test.flush", []byte("hi")); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-got:
			if string(m.Data) != "hi" {
				t.Fatalf("got %q", m.Data)
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the subscription got nothing after the reconnect")
		}
	}
}

// holdingProxy relays TCP to a server; while held, the server's bytes wait
// (so a PING goes unanswered), and cut closes every relayed connection.
type holdingProxy struct {
	addr  string
	mu    sync.Mutex
	held  bool
	wake  *sync.Cond
	conns []net.Conn
}

func newHoldingProxy(t *testing.T, target string) *holdingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &holdingProxy{addr: ln.Addr().String()}
	p.wake = sync.NewCond(&p.mu)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() {
				buf := make([]byte, 32<<10)
				for {
					n, err := u.Read(buf)
					p.mu.Lock()
					for p.held {
						p.wake.Wait()
					}
					p.mu.Unlock()
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							break
						}
					}
					if err != nil {
						break
					}
				}
				c.Close()
			}()
		}
	}()
	return p
}

func (p *holdingProxy) hold(on bool) {
	p.mu.Lock()
	p.held = on
	p.mu.Unlock()
	p.wake.Broadcast()
}

func (p *holdingProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// A router started while JetStream does not answer (its node killed, a
// leader being elected) waits for its consumer instead of failing: a
// toolrunner exited on "consumer toolrunner-set_rule: context deadline
// exceeded" in a chaos-cluster run. Here the server's answers are held
// back through a first lookup's timeout, then let go; a message published
// after must reach the handler.
func TestSubscribeWaitsForJetStreamToAnswer(t *testing.T) {
	def := testConsumer("late")
	e := newEnv(t, def)
	p := newHoldingProxy(t, e.srv.Addr().String())
	nc, err := nats.Connect("nats://"+p.addr, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	sub := bus.NewSubscriber(js, "late", []bus.ConsumerDef{def}, quiet)
	defer sub.Close()
	r, err := bus.NewRouter("late", e.pub, quiet, bus.NewRouterMetrics(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int32
	r.AddConsumerHandler(def.Name, def.Name, sub, func(m *message.Message) error { got.Add(1); return nil })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	p.hold(true)
	go func() { done <- r.Run(ctx) }()
	time.Sleep(6 * time.Second) // past the first lookup's 5-s bound
	p.hold(false)
	select {
	case <-r.Running():
	case err := <-done:
		t.Fatalf("the router stopped while JetStream was away: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("router did not start")
	}
	e.publish("purser.notify.t1.u1", "after", `{"n":1}`)
	waitFor(t, "the message published once JetStream answered", func() bool { return got.Load() == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("router: %v", err)
	}
}
