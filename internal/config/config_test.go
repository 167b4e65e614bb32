package config

import (
	"strings"
	"testing"
	"time"
)

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestModelServerIsChosenByKeyOrURL(t *testing.T) {
	for give, want := range map[[3]string]bool{
		{"", "", ""}:                               false,
		{"", "sk-x", ""}:                           true,
		{"", "", "http://localhost:11434/v1"}:      true,
		{"offline", "sk-x", ""}:                    false,
		{"openai", "", "http://localhost:8000/v1"}: true,
	} {
		c := FromEnv(env(map[string]string{"PURSER_MODEL": give[0], "OPENAI_API_KEY": give[1], "OPENAI_BASE_URL": give[2]}))
		if err := c.Check(ModeUp); err != nil {
			t.Errorf("%v: %v", give, err)
		}
		if got := c.UsesModelServer(); got != want {
			t.Errorf("%v: UsesModelServer = %v, want %v", give, got, want)
		}
	}
}

func TestDefaultsRunUp(t *testing.T) {
	c := FromEnv(env(nil))
	if err := c.Check(ModeUp); err != nil {
		t.Fatalf("defaults do not pass for up: %v", err)
	}
	if c.HTTPAddr != "127.0.0.1:8080" || c.NATSListen != "127.0.0.1:4223" || c.DataDir != "./data" || c.UsesModelServer() {
		t.Errorf("defaults differ from DESIGN.md: %+v", c)
	}
	if c.ProposalTTL != 24*time.Hour {
		t.Errorf("proposals wait %v by default, want a day", c.ProposalTTL)
	}
	if c.ShutdownGrace != 10*time.Second {
		t.Errorf("a stopping service waits %v for held work by default, want 10s", c.ShutdownGrace)
	}
	if c := FromEnv(env(map[string]string{"PURSER_SHUTDOWN_GRACE": "soon"})); c.Check(ModeUp) == nil {
		t.Error("PURSER_SHUTDOWN_GRACE=soon passed the check")
	}
	if c := FromEnv(env(map[string]string{"PURSER_PROPOSAL_TTL": "90m"})); c.ProposalTTL != 90*time.Minute || c.Check(ModeUp) != nil {
		t.Errorf("PURSER_PROPOSAL_TTL=90m gave %v", c.ProposalTTL)
	}
}

func TestCheckNamesTheSetting(t *testing.T) {
	secret := "s3cr3t-value-that-is-long-enough-xx"
	tests := []struct {
		name string
		mode Mode
		give map[string]string
		want []string
	}{
		{"bad http addr", ModeUp, map[string]string{"PURSER_HTTP_ADDR": "8080"}, []string{"PURSER_HTTP_ADDR"}},
		{"bad nats listen", ModeUp, map[string]string{"PURSER_NATS_LISTEN": "nowhere"}, []string{"PURSER_NATS_LISTEN"}},
		{"unknown model", ModeUp, map[string]string{"PURSER_MODEL": "gpt"}, []string{"PURSER_MODEL"}},
		{"openai without key", ModeUp, map[string]string{"PURSER_MODEL": "openai"}, []string{"OPENAI_API_KEY"}},
		{"gmail without key", ModeToolrunner, map[string]string{"PURSER_MAIL": "gmail", "NATS_URL": "nats://x:4222", "DATABASE_URL": "postgres://x/y"}, []string{"PURSER_MAIL_TOKEN_KEY"}},
		{"unknown mail", ModeUp, map[string]string{"PURSER_MAIL": "imap"}, []string{"PURSER_MAIL"}},
		{"service needs nats and db", ModeOrchestrator, nil, []string{"NATS_URL", "DATABASE_URL"}},
		{"ingress needs no db but a secret", ModeIngress, map[string]string{"NATS_URL": "nats://n:4222"}, []string{"PURSER_JWT_SECRET"}},
		{"short secret", ModeIngress, map[string]string{"NATS_URL": "nats://n:4222", "PURSER_JWT_SECRET": "short"}, []string{"PURSER_JWT_SECRET"}},
		{"both secret and jwks", ModeIngress, map[string]string{"NATS_URL": "nats://n:4222", "PURSER_JWT_SECRET": secret, "PURSER_JWKS_URL": "https://x/jwks"}, []string{"PURSER_JWKS_URL"}},
		{"unknown tool", ModeToolrunner, map[string]string{"NATS_URL": "nats://n:4222", "DATABASE_URL": "postgres://x/y", "PURSER_TOOLS": "add_expense,rm_rf"}, []string{`PURSER_TOOLS: unknown tool "rm_rf"`}},
		{"proposal ttl not a duration", ModeUp, map[string]string{"PURSER_PROPOSAL_TTL": "a day"}, []string{"PURSER_PROPOSAL_TTL"}},
		{"proposal ttl too short", ModeUp, map[string]string{"PURSER_PROPOSAL_TTL": "10s"}, []string{"PURSER_PROPOSAL_TTL"}},
		{"bad log level", ModeNotifier, map[string]string{"NATS_URL": "nats://n:4222", "DATABASE_URL": "postgres://x/y", "PURSER_LOG_LEVEL": "loud"}, []string{"PURSER_LOG_LEVEL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := FromEnv(env(tt.give)).Check(tt.mode)
			if err == nil {
				t.Fatal("Check() = nil, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error echoes the secret: %q", err)
			}
		})
	}
}

func TestGoodServiceConfig(t *testing.T) {
	c := FromEnv(env(map[string]string{"NATS_URL": "nats://nats:4222", "DATABASE_URL": "postgres://u@db/purser", "PURSER_TOOLS": "list_expenses"}))
	for _, m := range []Mode{ModeOrchestrator, ModeToolrunner, ModeNotifier} {
		if err := c.Check(m); err != nil {
			t.Errorf("Check(%s) = %v", m, err)
		}
	}
}
