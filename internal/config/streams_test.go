package config

import (
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
)

func TestStreamTunablesFromSettings(t *testing.T) {
	c := FromEnv(env(map[string]string{"PURSER_STREAM_REPLICAS": "3", "PURSER_STREAM_MAX_BYTES": "1GiB, dlq=128MiB", "PURSER_STREAM_MAX_AGE": "AGENT=1d"}))
	got, err := c.StreamTunables()
	if err != nil {
		t.Fatal(err)
	}
	if got.Replicas != 3 || got.MaxBytes[""] != 1<<30 || got.MaxBytes[bus.StreamDLQ] != 128<<20 || got.MaxAge[bus.StreamAgent] != 24*time.Hour || len(got.MaxAge) != 1 {
		t.Fatalf("got %+v", got)
	}
	def, err := FromEnv(env(nil)).StreamTunables()
	if err != nil || def.Replicas != 1 || len(def.MaxBytes) != 0 || len(def.MaxAge) != 0 {
		t.Fatalf("defaults: %+v, %v", def, err)
	}
}

func TestBadStreamTunablesNameTheirSetting(t *testing.T) {
	for give, want := range map[[2]string]string{
		{"PURSER_STREAM_REPLICAS", "0"}:          "PURSER_STREAM_REPLICAS",
		{"PURSER_STREAM_REPLICAS", "seven"}:      "PURSER_STREAM_REPLICAS",
		{"PURSER_STREAM_MAX_BYTES", "lots"}:      "PURSER_STREAM_MAX_BYTES",
		{"PURSER_STREAM_MAX_BYTES", "EVENTS=1G"}: `unknown stream "EVENTS"`,
		{"PURSER_STREAM_MAX_BYTES", "1G,2G"}:     "given twice",
		{"PURSER_STREAM_MAX_AGE", "forever"}:     "PURSER_STREAM_MAX_AGE",
	} {
		err := FromEnv(env(map[string]string{give[0]: give[1]})).Check(ModeUp)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: got %v, want an error naming %s", give[0], give[1], err, want)
		}
	}
}

func TestNATSCredentialsAreOneKind(t *testing.T) {
	base := map[string]string{"NATS_URL": "nats://n:4222", "DATABASE_URL": "postgres://x/y"}
	with := func(kv map[string]string) Config {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range kv {
			m[k] = v
		}
		return FromEnv(env(m))
	}
	for _, ok := range []map[string]string{nil, {"NATS_USER": "notifier", "NATS_PASSWORD": "pw"}, {"NATS_CREDS": "/c"}, {"NATS_NKEY": "/k"}} {
		if err := with(ok).Check(ModeNotifier); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	for give, want := range map[[2]string]string{
		{"NATS_USER", "notifier"}: "NATS_PASSWORD",
		{"NATS_PASSWORD", "pw"}:   "NATS_PASSWORD",
	} {
		err := with(map[string]string{give[0]: give[1]}).Check(ModeNotifier)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: got %v, want %s named", give, err, want)
		}
	}
	err := with(map[string]string{"NATS_CREDS": "/c", "NATS_NKEY": "/k"}).Check(ModeNotifier)
	if err == nil || !strings.Contains(err.Error(), "NATS_USER") {
		t.Errorf("two kinds: got %v", err)
	}
	err = with(map[string]string{"NATS_USER": "notifier", "NATS_PASSWORD": "s3cret-pw"}).Check(ModeOrchestrator)
	if err != nil && strings.Contains(err.Error(), "s3cret-pw") {
		t.Errorf("error echoes the password: %v", err)
	}
}
