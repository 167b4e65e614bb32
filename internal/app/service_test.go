package app

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The four services as separate processes would run them (purser
// ingress, orchestrator, toolrunner, notifier): each on its own NATS
// connection to an external server and on Postgres, as in deploy/k8s,
// each logged in as its own NATS user with only its own permissions.
func TestServicesRunApart(t *testing.T) {
	t.Parallel()
	svc := startApart(t, storetest.PostgresDSN(t))
	ingressAddr := svc.ingress
	token := svc.mint("acme", "ann", auth.RoleMember)
	c := dial(t, Info{HTTPAddr: ingressAddr}, token)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"add coffee £3"}`)
	p := c.next(contracts.FrameProposal)
	if p.Proposal == nil || !strings.Contains(p.Proposal.Summary, "coffee") {
		t.Fatalf("proposal frame = %+v", p)
	}

	// Someone else confirms ann's proposal, by its id, under ann's
	// conversation id (a conversation of their own) and under another id:
	// refused, nothing is added.
	for _, who := range []struct{ tenant, user string }{{"acme", "bob"}, {"evil", "ann"}} {
		forged := svc.mint(who.tenant, who.user, auth.RoleOwner)
		f := dial(t, Info{HTTPAddr: ingressAddr}, forged)
		for i, conv := range []string{"c1", "mine"} {
			f.send(`{"type":"confirm","id":"f` + strconv.Itoa(i) + `","conversation_id":"` + conv + `","proposal_id":"` + p.Proposal.ProposalID + `","decision":"approve"}`)
			e := f.next(contracts.FrameError)
			want := contracts.CodeProposalInvalid
			if e.Error == nil || e.Error.Code != want {
				t.Fatalf("%s/%s confirming ann's proposal in %s: %+v", who.tenant, who.user, conv, e.Error)
			}
		}
		f.send(`{"type":"message","id":"l1","conversation_id":"mine","text":"list my expenses"}`)
		if l := f.next(contracts.FrameAnswer); len(l.Answer.Listed) != 0 {
			t.Fatalf("%s/%s sees expenses %+v", who.tenant, who.user, l.Answer.Listed)
		}
	}
	c.send(`{"type":"message","id":"m1b","conversation_id":"c2","text":"list my expenses"}`)
	if l := c.next(contracts.FrameAnswer); len(l.Answer.Listed) != 0 {
		t.Fatalf("after forged confirms ann has expenses %+v", l.Answer.Listed)
	}
	c.send(`{"type":"confirm","id":"m2","conversation_id":"c1","proposal_id":"` + p.Proposal.ProposalID + `","decision":"approve"}`)
	a := c.next(contracts.FrameAnswer)
	if a.Answer == nil || a.Answer.Added == nil || a.Answer.Added.Amount.Minor != 300 {
		t.Fatalf("answer frame = %+v", a.Answer)
	}
	if a.Seq <= p.Seq {
		t.Errorf("answer seq %d not after proposal seq %d", a.Seq, p.Seq)
	}
}

// apart runs the four services as separate processes would, each on its
// own NATS connection to one external server, logged in as its own NATS
// user, and all on one store. A service can be stopped and started again,
// as a deployment restarts it.
type apart struct {
	t       *testing.T
	cfg     config.Config
	creds   map[string]string
	logs    *logWatch
	ingress string                 // the ingress's HTTP address
	stops   map[config.Mode]func() // the services running
}

// startApart starts the services on the store dsn; the test's cleanup
// stops them and checks their logs.
func startApart(t *testing.T, dsn string) *apart {
	t.Helper()
	srv, creds := natstest.StartWithServiceUsers(t)
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.NATSURL = srv.ClientURL()
	cfg.DatabaseURL = dsn
	cfg.JWTSecret = strings.Repeat("k", 32)
	cfg.HTTPAddr = "127.0.0.1:0"
	a := &apart{t: t, cfg: cfg, creds: creds, logs: watchLogs(t), stops: map[config.Mode]func(){}}
	a.logs.forbid(cfg.JWTSecret)
	modes := []config.Mode{config.ModeNotifier, config.ModeToolrunner, config.ModeOrchestrator, config.ModeIngress}
	t.Cleanup(func() {
		for _, mode := range slices.Backward(modes) {
			if stop := a.stops[mode]; stop != nil {
				stop()
			}
		}
		a.logs.check(t)
	})
	for _, mode := range modes {
		a.start(mode)
	}
	return a
}

// start runs one service, its own NATS user, until the test ends or stop.
func (a *apart) start(mode config.Mode) {
	a.t.Helper()
	addr, stop := a.replica(mode)
	if mode == config.ModeIngress {
		a.ingress = addr
	}
	a.stops[mode] = stop
}

// replica runs one more replica of a service, as another pod would, and
// returns its HTTP address and its stop (a SIGTERM: a graceful shutdown),
// which the caller must call before the test ends.
func (a *apart) replica(mode config.Mode) (addr string, stop func()) {
	a.t.Helper()
	cfg := a.cfg
	cfg.NATSUser, cfg.NATSPassword = string(mode), a.creds[string(mode)]
	a.logs.forbid(cfg.NATSPassword)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- runService(ctx, cfg, mode, a.logs.logger(), func(addr string) { ready <- addr }) }()
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		a.t.Fatalf("%s failed to start: %v", mode, err)
	case <-time.After(60 * time.Second):
		cancel()
		a.t.Fatalf("%s not ready", mode)
	}
	var once sync.Once
	return addr, func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					a.t.Errorf("%s returned %v at shutdown", mode, err)
				}
			case <-time.After(30 * time.Second):
				a.t.Errorf("%s did not stop within 30 s", mode)
			}
		})
	}
}

// stop stops one service and waits until it has.
func (a *apart) stop(mode config.Mode) {
	a.t.Helper()
	stop := a.stops[mode]
	if stop == nil {
		a.t.Fatalf("%s is not running", mode)
	}
	delete(a.stops, mode)
	stop()
}

// mint makes a token the ingress takes, kept out of the logs.
func (a *apart) mint(tenant, user string, role auth.Role) string {
	a.t.Helper()
	tok, err := auth.NewMinter([]byte(a.cfg.JWTSecret), a.cfg.JWTIssuer, a.cfg.JWTAudience, time.Now).Mint(tenant, user, []auth.Role{role}, time.Hour)
	if err != nil {
		a.t.Fatal(err)
	}
	a.logs.forbid(tok)
	return tok
}
