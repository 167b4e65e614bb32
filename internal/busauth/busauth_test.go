package busauth_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/busauth"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/services/toolrunner"
)

var update = flag.Bool("update", false, "rewrite deploy/k8s/base/nats/auth.conf")

const authConf = "../../deploy/k8s/base/nats/auth.conf"

// The cluster's configuration in deploy/k8s is this table, rendered.
func TestDeployedAuthorizationIsTheTable(t *testing.T) {
	got := busauth.ServerConfig()
	if *update {
		if err := os.WriteFile(authConf, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(authConf)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/busauth -update)", err)
	}
	if string(want) != got {
		t.Fatalf("%s is out of date: run go test ./internal/busauth -update", authConf)
	}
}

func TestTheRateLimitBucketIsTheToolrunners(t *testing.T) {
	p, _ := busauth.For(busauth.Toolrunner)
	if !strings.Contains(strings.Join(p.Publish, " "), "$KV."+toolrunner.RateLimitBucket+".>") {
		t.Fatalf("the toolrunner may not write its bucket %s", toolrunner.RateLimitBucket)
	}
}

// secured is a server and every user's password.
type secured struct {
	srv   *server.Server
	creds map[string]string
}

// embedded is `purser up`'s server: the users from the table.
func embedded(t *testing.T) secured {
	srv, creds := natstest.StartWithServiceUsers(t)
	return secured{srv, creds}
}

// deployed is the server deploy/k8s runs: the rendered configuration,
// passwords from the environment.
func deployed(t *testing.T) secured {
	creds := map[string]string{}
	for _, u := range busauth.Users {
		creds[u] = "pw-" + u + "-" + strings.Repeat("x", 20)
		t.Setenv(busauth.PasswordEnv(u), creds[u])
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "nats.conf")
	body := "listen: 127.0.0.1:-1\njetstream { store_dir: \"" + filepath.Join(dir, "js") + "\" }\n" + busauth.ServerConfig()
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("the rendered configuration does not load: %v", err)
	}
	opts.NoSigs, opts.NoLog = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(30 * time.Second) {
		t.Fatal("server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return secured{s, creds}
}

// errs collects a connection's asynchronous errors (permission violations).
type errs chan error

func (s secured) connect(t *testing.T, user string) (*nats.Conn, errs) {
	t.Helper()
	ch := make(errs, 16)
	nc, err := nats.Connect(s.srv.ClientURL(), nats.UserInfo(user, s.creds[user]), nats.CustomInboxPrefix(busauth.InboxPrefix(user)),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { ch <- err }))
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	return nc, ch
}

// violation waits for the server to report a permission violation naming
// subject. The server answers the PUB or SUB before the PING of a flush,
// so it is on its way; the deadline only bounds a hang.
func (e errs) violation(t *testing.T, subject string) {
	t.Helper()
	for {
		select {
		case err := <-e:
			if errors.Is(err, nats.ErrPermissionViolation) && strings.Contains(err.Error(), subject) {
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no permission violation reported for %s", subject)
		}
	}
}

func TestPermissions(t *testing.T) {
	for name, start := range map[string]func(*testing.T) secured{"embedded": embedded, "deployed": deployed} {
		t.Run(name, func(t *testing.T) {
			s := start(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			t.Run("anonymous and wrong passwords are refused", func(t *testing.T) {
				if nc, err := nats.Connect(s.srv.ClientURL()); err == nil {
					nc.Close()
					t.Fatal("an anonymous client connected")
				} else if !errors.Is(err, nats.ErrAuthorization) {
					t.Fatalf("anonymous: %v, want an authorization violation", err)
				}
				if nc, err := nats.Connect(s.srv.ClientURL(), nats.UserInfo(busauth.Ingress, "guess")); err == nil {
					nc.Close()
					t.Fatal("a wrong password connected")
				}
			})

			// Each service creates the streams it finds missing.
			for _, u := range []string{busauth.Notifier, busauth.Orchestrator, busauth.Toolrunner, busauth.Ingress} {
				nc, _ := s.connect(t, u)
				js, _ := jetstream.New(nc)
				if _, err := bus.EnsureStreams(ctx, js, bus.DefaultStreamTunables()); err != nil {
					t.Fatalf("%s cannot ensure the streams: %v", u, err)
				}
			}

			t.Run("a service publishes only its own subjects", func(t *testing.T) {
				in, inErrs := s.connect(t, busauth.Ingress)
				inJS, _ := jetstream.New(in)
				if _, err := inJS.Publish(ctx, "purser.turns.t1.c1", []byte(`{}`)); err != nil {
					t.Fatalf("the ingress cannot publish a turn: %v", err)
				}
				// A forged answer, as if from the orchestrator.
				if err := in.Publish("purser.agent.t1.u1.c1", []byte(`{"forged":true}`)); err != nil {
					t.Fatal(err)
				}
				if err := in.Flush(); err != nil {
					t.Fatal(err)
				}
				inErrs.violation(t, "purser.agent.t1.u1.c1")

				orch, _ := s.connect(t, busauth.Orchestrator)
				orchJS, _ := jetstream.New(orch)
				if _, err := orchJS.Publish(ctx, "purser.agent.t1.u1.c1", []byte(`{"real":true}`)); err != nil {
					t.Fatalf("the orchestrator cannot publish an answer: %v", err)
				}
				admin, _ := s.connect(t, busauth.Admin)
				adminJS, _ := jetstream.New(admin)
				agent, err := adminJS.Stream(ctx, bus.StreamAgent)
				if err != nil {
					t.Fatal(err)
				}
				info, err := agent.Info(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if info.State.Msgs != 1 {
					t.Fatalf("AGENT holds %d messages, want only the orchestrator's", info.State.Msgs)
				}
				if m, err := agent.GetMsg(ctx, 1); err != nil || string(m.Data) != `{"real":true}` {
					t.Fatalf("AGENT holds %v, %v; want the orchestrator's answer", m, err)
				}

				tr, trErrs := s.connect(t, busauth.Toolrunner)
				if err := tr.Publish("purser.turns.t1.c1", []byte(`{}`)); err != nil {
					t.Fatal(err)
				}
				_ = tr.Flush()
				trErrs.violation(t, "purser.turns.t1.c1")
			})

			t.Run("a service reads no one else's messages", func(t *testing.T) {
				in, inErrs := s.connect(t, busauth.Ingress)
				if _, err := in.SubscribeSync("purser.turns.>"); err != nil {
					t.Fatal(err)
				}
				_ = in.Flush()
				inErrs.violation(t, "purser.turns.>")
				if _, err := in.SubscribeSync(busauth.InboxPrefix(busauth.Orchestrator) + ".>"); err != nil {
					t.Fatal(err)
				}
				_ = in.Flush()
				inErrs.violation(t, busauth.InboxPrefix(busauth.Orchestrator))

				// Nor through a consumer of its own on another's stream.
				if err := in.PublishRequest("$JS.API.CONSUMER.CREATE.AGENT.snoop", in.NewRespInbox(), []byte(`{}`)); err != nil {
					t.Fatal(err)
				}
				_ = in.Flush()
				inErrs.violation(t, "$JS.API.CONSUMER.CREATE.AGENT.snoop")
			})

			t.Run("the notifier answers the ingress's requests", func(t *testing.T) {
				no, _ := s.connect(t, busauth.Notifier)
				sub, err := no.Subscribe("purser.notifier.resume.t1.u1", func(m *nats.Msg) { _ = m.Respond([]byte("page")) })
				if err != nil {
					t.Fatal(err)
				}
				defer sub.Unsubscribe()
				_ = no.Flush()
				in, _ := s.connect(t, busauth.Ingress)
				reply, err := in.Request("purser.notifier.resume.t1.u1", []byte("{}"), 10*time.Second)
				if err != nil || string(reply.Data) != "page" {
					t.Fatalf("request: %v, %v", reply, err)
				}
			})

			t.Run("the admin may change a stream, a service may not", func(t *testing.T) {
				tr, trErrs := s.connect(t, busauth.Toolrunner)
				if err := tr.PublishRequest("$JS.API.STREAM.UPDATE.TOOLS", tr.NewRespInbox(), []byte(`{}`)); err != nil {
					t.Fatal(err)
				}
				_ = tr.Flush()
				trErrs.violation(t, "$JS.API.STREAM.UPDATE.TOOLS")
				cfg := bus.StreamConfigs()[1]
				cfg.MaxBytes = 1 << 30
				admin, _ := s.connect(t, busauth.Admin)
				adminJS, _ := jetstream.New(admin)
				if _, err := adminJS.UpdateStream(ctx, cfg); err != nil {
					t.Fatalf("the admin cannot change a stream: %v", err)
				}
			})
		})
	}
}

// deploy/k8s's nats.conf, with the generated auth.conf it includes, is a
// configuration nats-server accepts: a JetStream cluster on file storage
// whose users are the table's.
func TestDeployedNATSConfigLoads(t *testing.T) {
	t.Setenv("SERVER_NAME", "nats-0")
	for _, u := range busauth.Users {
		t.Setenv(busauth.PasswordEnv(u), "pw-"+u)
	}
	opts, err := server.ProcessConfigFile("../../deploy/k8s/base/nats/nats.conf")
	if err != nil {
		t.Fatalf("nats.conf: %v", err)
	}
	if !opts.JetStream || opts.StoreDir != "/data/jetstream" || opts.SyncInterval != 2*time.Minute || opts.Cluster.Name != "purser" || len(opts.Routes) != 3 {
		t.Errorf("jetstream %v store %q sync %v cluster %q routes %d", opts.JetStream, opts.StoreDir, opts.SyncInterval, opts.Cluster.Name, len(opts.Routes))
	}
	if opts.LameDuckDuration != 30*time.Second || opts.LameDuckGracePeriod != 10*time.Second {
		t.Errorf("lame duck %v after %v", opts.LameDuckDuration, opts.LameDuckGracePeriod)
	}
	if opts.ServerName != "nats-0" {
		t.Errorf("server name %q, want it from $SERVER_NAME", opts.ServerName)
	}
	if len(opts.Users) != len(busauth.Users) {
		t.Fatalf("%d users, want %d", len(opts.Users), len(busauth.Users))
	}
	for _, u := range opts.Users {
		if u.Password != "pw-"+u.Username {
			t.Errorf("user %s does not take its password from %s", u.Username, busauth.PasswordEnv(u.Username))
		}
	}
}
