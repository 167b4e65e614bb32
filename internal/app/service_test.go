package app

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/busauth"
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
	creds, err := busauth.LoadOrCreate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	users, err := busauth.ServerUsers(creds)
	if err != nil {
		t.Fatal(err)
	}
	srv := natstest.StartWithUsers(t, users)
	secret := strings.Repeat("k", 32)
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.NATSURL = srv.ClientURL()
	cfg.DatabaseURL = storetest.PostgresDSN(t)
	cfg.JWTSecret = secret
	cfg.HTTPAddr = "127.0.0.1:0"
	logs := watchLogs(t)
	logs.forbid(secret)
	log := logs.logger()

	ctx, cancel := context.WithCancel(context.Background())
	var ingressAddr string
	done := make(chan error, 4)
	for _, mode := range []config.Mode{config.ModeNotifier, config.ModeToolrunner, config.ModeOrchestrator, config.ModeIngress} {
		ready := make(chan string, 1)
		cfg := cfg
		cfg.NATSUser, cfg.NATSPassword = string(mode), creds[string(mode)]
		logs.forbid(cfg.NATSPassword)
		go func() { done <- runService(ctx, cfg, mode, log, func(addr string) { ready <- addr }) }()
		select {
		case addr := <-ready:
			if mode == config.ModeIngress {
				ingressAddr = addr
			}
		case err := <-done:
			cancel()
			t.Fatalf("%s failed to start: %v", mode, err)
		case <-time.After(60 * time.Second):
			cancel()
			t.Fatalf("%s not ready", mode)
		}
	}
	t.Cleanup(func() {
		cancel()
		for range 4 {
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("service returned %v at shutdown", err)
				}
			case <-time.After(30 * time.Second):
				t.Error("a service did not stop within 30 s")
			}
		}
		logs.check(t)
	})

	token, err := auth.NewMinter([]byte(secret), cfg.JWTIssuer, cfg.JWTAudience, time.Now).Mint("acme", "ann", []auth.Role{auth.RoleMember}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	logs.forbid(token)
	c := dial(t, Info{HTTPAddr: ingressAddr}, token)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"add coffee £3"}`)
	p := c.next(contracts.FrameProposal)
	if p.Proposal == nil || !strings.Contains(p.Proposal.Summary, "coffee") {
		t.Fatalf("proposal frame = %+v", p)
	}

	// Someone else confirms ann's proposal, by its id, in ann's
	// conversation and in one of their own: refused, nothing is added.
	for _, who := range []struct{ tenant, user string }{{"acme", "bob"}, {"evil", "ann"}} {
		forged, err := auth.NewMinter([]byte(secret), cfg.JWTIssuer, cfg.JWTAudience, time.Now).Mint(who.tenant, who.user, []auth.Role{auth.RoleOwner}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		logs.forbid(forged)
		f := dial(t, Info{HTTPAddr: ingressAddr}, forged)
		for i, conv := range []string{"c1", "mine"} {
			f.send(`{"type":"confirm","id":"f` + strconv.Itoa(i) + `","conversation_id":"` + conv + `","proposal_id":"` + p.Proposal.ProposalID + `","decision":"approve"}`)
			e := f.next(contracts.FrameError)
			want := contracts.CodeProposalInvalid
			if who.tenant == "acme" && conv == "c1" {
				want = contracts.CodeForbidden // ann's own conversation
			}
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
