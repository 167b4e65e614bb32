package app

import (
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// balancer is a TCP load balancer in front of ingress replicas: each new
// connection goes to the current target; connections already open stay
// where they are, as behind a Kubernetes Service whose endpoints change.
type balancer struct {
	ln     net.Listener
	target atomic.Value // string
	wg     sync.WaitGroup
}

func startBalancer(t *testing.T, target string) *balancer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &balancer{ln: ln}
	b.target.Store(target)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			b.wg.Add(1)
			go func() {
				defer b.wg.Done()
				defer in.Close()
				out, err := net.Dial("tcp", b.target.Load().(string))
				if err != nil {
					return
				}
				defer out.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
				go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); b.wg.Wait() })
	return b
}

func (b *balancer) addr() string { return b.ln.Addr().String() }

// A rolling restart as the widget lives it: its ingress replica stops
// (SIGTERM) and closes the socket with 1012; the page connects again at
// once, with no back-off (the header never says it is disconnected and
// retrying), lands on the other replica through the load balancer,
// resumes, and the conversation goes on: each message once, one reply
// each.
func TestWidgetMovesToAnotherIngressOnARestart(t *testing.T) {
	t.Parallel()
	svc := startApart(t, storetest.SQLiteDSN(t))
	first, stopFirst := svc.replica(config.ModeIngress)
	defer stopFirst()
	lb := startBalancer(t, first)
	token := svc.mint("acme", "ann", auth.RoleMember)
	b := startBrowser(t)
	b.open("http://" + lb.addr() + "/chat#token=" + token)
	b.waitExact("#status", "connected")
	say(b, "how much did I spend this month?")
	replyTo(b, "how much did I spend this month?")
	b.script(`window.statusSeen = [];
		const el = document.getElementById("status");
		new MutationObserver(() => statusSeen.push(el.textContent)).observe(el, { childList: true, characterData: true, subtree: true });
		window.closes = [];
		state.ws.addEventListener("close", (ev) => closes.push(ev.code));
		return true`, nil)

	lb.target.Store(svc.ingress)
	stopFirst()
	b.waitFor("the socket closed", func() bool { return b.eval(`return closes.length`) == "1" })
	if got := b.eval(`return closes[0]`); got != "1012" {
		t.Fatalf("the socket closed with %s, want 1012 (service restart)", got)
	}
	b.waitExact("#status", "connected")
	var seen []string
	b.script(`return statusSeen`, &seen)
	for _, s := range seen {
		if strings.Contains(s, "retrying") || strings.Contains(s, "sign") {
			t.Errorf("the header said %q on a restart (statuses %q): the page waited out a back-off", s, seen)
		}
	}
	say(b, "list my expenses")
	replyTo(b, "list my expenses")
	if got := b.texts("#transcript > li.user"); len(got) != 2 {
		t.Errorf("the person's messages show as %q, want the two, once each", got)
	}
	if got := b.texts(replies); len(got) != 2 {
		t.Errorf("replies %q, want one for each message", got)
	}
	b.shot("01-after-restart")
}
