package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/purser-ai/purser/internal/busauth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/natsembed"
	"github.com/purser-ai/purser/internal/natstest"
)

// adminLogin is what the banner tells a person to give the NATS CLI.
func adminLogin(t *testing.T, info Info) nats.Option {
	t.Helper()
	pw, err := os.ReadFile(info.NATSPasswordFile)
	if err != nil {
		t.Fatalf("the banner's password file: %v", err)
	}
	return nats.UserInfo(busauth.Admin, strings.TrimSpace(string(pw)))
}

// purser up's NATS refuses anonymous clients and a service's user outside
// its subjects; the banner says how to log in.
func TestUpsNATSNeedsCredentials(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	if nc, err := nats.Connect(info.NATSURL); err == nil {
		nc.Close()
		t.Fatal("an anonymous client connected to purser up's NATS")
	} else if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("anonymous: %v, want an authorization violation", err)
	}
	admin, err := nats.Connect(info.NATSURL, adminLogin(t, info))
	if err != nil {
		t.Fatalf("admin: %v", err)
	}
	admin.Close()

	var banner bytes.Buffer
	PrintInfo(&banner, info)
	if !strings.Contains(banner.String(), "--user admin --password \"$(cat "+info.NATSPasswordFile+")\"") {
		t.Errorf("the banner does not say how to log in:\n%s", banner.String())
	}
	if pw, _ := os.ReadFile(info.NATSPasswordFile); strings.Contains(banner.String(), strings.TrimSpace(string(pw))) {
		t.Error("the banner prints the password itself")
	}
	st, err := os.Stat(info.NATSPasswordFile)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("password file mode %v, %v; want 0600", st.Mode().Perm(), err)
	}

	// `purser streams apply` finds the running up's server and logs in as
	// its admin from the data folder alone.
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.DataDir = filepath.Dir(filepath.Dir(info.NATSPasswordFile))
	cfg.NATSListen = strings.TrimPrefix(info.NATSURL, "nats://")
	var out bytes.Buffer
	if err := StreamsApply(context.Background(), cfg, &out, true); err != nil {
		t.Fatalf("streams apply against purser up: %v", err)
	}
	if !strings.Contains(out.String(), "every stream matches") {
		t.Errorf("streams apply on a fresh up:\n%s", out.String())
	}
}

// A service's user may not change streams: streams apply says so at once.
func TestStreamsApplyAsAServiceIsRefused(t *testing.T) {
	t.Parallel()
	srv, creds := natstest.StartWithServiceUsers(t)
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.NATSURL = srv.ClientURL()
	var out bytes.Buffer
	cfg.NATSUser, cfg.NATSPassword = busauth.Admin, creds[busauth.Admin]
	if err := StreamsApply(context.Background(), cfg, &out, false); err != nil {
		t.Fatalf("as the admin: %v", err)
	}
	// The operator's configuration changes; a service applies it.
	cfg.StreamMaxBytes = "64MiB"
	cfg.NATSUser, cfg.NATSPassword = busauth.Toolrunner, creds[busauth.Toolrunner]
	out.Reset()
	err := StreamsApply(context.Background(), cfg, &out, false)
	if err == nil || !strings.Contains(err.Error(), "run as the admin user") || !strings.Contains(err.Error(), "STREAM.UPDATE") {
		t.Fatalf("got %v, want the update refused, naming the admin user", err)
	}
	if !strings.Contains(out.String(), "max_bytes") {
		t.Errorf("the differences were not printed first:\n%s", out.String())
	}
}

// NATS_NKEY logs in with an nkey seed file; a wrong key is refused.
func TestAServiceLogsInWithAnNkey(t *testing.T) {
	t.Parallel()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	dir := t.TempDir()
	seedFile := filepath.Join(dir, "notifier.nk")
	if err := os.WriteFile(seedFile, seed, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := natsembed.Start(natsembed.Options{StoreDir: filepath.Join(dir, "js"), Port: -1, Nkeys: []*server.NkeyUser{{Nkey: pub}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.NATSNKey = seedFile
	opts, err := serviceOptions(cfg, busauth.Notifier)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatalf("nkey login: %v", err)
	}
	nc.Close()

	other, _ := nkeys.CreateUser()
	otherSeed, _ := other.Seed()
	if err := os.WriteFile(seedFile, otherSeed, 0o600); err != nil {
		t.Fatal(err)
	}
	opts, _ = serviceOptions(cfg, busauth.Notifier)
	if nc, err := nats.Connect(s.ClientURL(), opts...); err == nil {
		nc.Close()
		t.Fatal("an unknown nkey logged in")
	}
}
