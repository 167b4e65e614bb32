package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
)

func streamConfig(t *testing.T, js jetstream.JetStream, name string) jetstream.StreamConfig {
	t.Helper()
	s, err := js.Stream(context.Background(), name)
	if err != nil {
		t.Fatalf("stream %s: %v", name, err)
	}
	return s.CachedInfo().Config
}

func TestEveryStreamIsBounded(t *testing.T) {
	for _, sc := range bus.StreamConfigs() {
		if sc.MaxBytes <= 0 || sc.MaxAge <= 0 || sc.Replicas != 1 {
			t.Errorf("stream %s: max bytes %d, max age %v, replicas %d; want bounded, one replica by default", sc.Name, sc.MaxBytes, sc.MaxAge, sc.Replicas)
		}
	}
}

func TestMissingStreamsAreCreatedWithTheConfiguredTunables(t *testing.T) {
	_, nc := natstest.Start(t)
	js, _ := jetstream.New(nc)
	tun := bus.StreamTunables{Replicas: 1, MaxBytes: map[string]int64{"": 64 << 20, bus.StreamDLQ: 8 << 20}, MaxAge: map[string]time.Duration{bus.StreamAgent: 36 * time.Hour}}
	plans, err := bus.EnsureStreams(context.Background(), js, tun)
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) != len(bus.StreamNames()) {
		t.Fatalf("got %d plans, want one per stream (%d)", len(plans), len(bus.StreamNames()))
	}
	if got := streamConfig(t, js, bus.StreamDLQ).MaxBytes; got != 8<<20 {
		t.Errorf("DLQ max bytes %d, want the per-stream setting 8 MiB", got)
	}
	if got := streamConfig(t, js, bus.StreamTools).MaxBytes; got != 64<<20 {
		t.Errorf("TOOLS max bytes %d, want the every-stream setting 64 MiB", got)
	}
	if got := streamConfig(t, js, bus.StreamAgent).MaxAge; got != 36*time.Hour {
		t.Errorf("AGENT max age %v, want 36h", got)
	}
	if got := streamConfig(t, js, bus.StreamNotify).MaxAge; got != bus.DefaultMaxAge[bus.StreamNotify] {
		t.Errorf("NOTIFY max age %v, want its default", got)
	}
	if got := streamConfig(t, js, bus.StreamTurns).Discard; got != jetstream.DiscardNew {
		t.Errorf("TURNS discard %v, want new: a full work queue refuses turns rather than dropping unprocessed ones", got)
	}
}

// An operator's `nats stream edit AGENT --max-bytes=1GB --max-age=1d`
// survives the next start of every service: start-up only reports it, and
// only `purser streams apply` puts the configuration back.
func TestAnOperatorsEditSurvivesProvisioning(t *testing.T) {
	_, nc := natstest.Start(t)
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if err := bus.Provision(ctx, js, bus.NotifierConsumers()...); err != nil {
		t.Fatal(err)
	}
	edited := streamConfig(t, js, bus.StreamAgent)
	edited.MaxBytes = 1 << 30
	edited.MaxAge = 24 * time.Hour
	if _, err := js.UpdateStream(ctx, edited); err != nil {
		t.Fatalf("operator edit: %v", err)
	}

	if err := bus.Provision(ctx, js, bus.NotifierConsumers()...); err != nil {
		t.Fatal(err)
	}
	plans, err := bus.EnsureStreams(ctx, js, bus.DefaultStreamTunables())
	if err != nil {
		t.Fatal(err)
	}
	got := streamConfig(t, js, bus.StreamAgent)
	if got.MaxBytes != 1<<30 || got.MaxAge != 24*time.Hour {
		t.Fatalf("after a restart AGENT has max bytes %s, max age %s; want the operator's 1GiB and 1d",
			bus.FormatBytes(got.MaxBytes), bus.FormatAge(got.MaxAge))
	}
	var agent bus.StreamPlan
	for _, p := range plans {
		if p.Name == bus.StreamAgent {
			agent = p
		} else if p.Changed() {
			t.Errorf("stream %s reported changed: %+v", p.Name, p)
		}
	}
	want := []bus.Change{{Setting: "max_bytes", Have: "1GiB", Want: "512MiB"}, {Setting: "max_age", Have: "1d", Want: "7d"}}
	if len(agent.Required) != 0 || len(agent.Tunable) != 2 || agent.Tunable[0] != want[0] || agent.Tunable[1] != want[1] {
		t.Fatalf("AGENT plan: required %v, tunable %v; want tunable %v", agent.Required, agent.Tunable, want)
	}

	if err := bus.ApplyStreams(ctx, js, plans); err != nil {
		t.Fatal(err)
	}
	got = streamConfig(t, js, bus.StreamAgent)
	if got.MaxBytes != 512<<20 || got.MaxAge != 7*24*time.Hour {
		t.Fatalf("after apply AGENT has %s / %s, want the configured 512MiB / 7d", bus.FormatBytes(got.MaxBytes), bus.FormatAge(got.MaxAge))
	}
	if got.Description != edited.Description {
		t.Errorf("apply changed the description, which purser does not manage")
	}
}

// A stream whose subjects or retention purser depends on were changed is
// reported at start, naming stream and setting, and left alone.
func TestARequiredSettingThatDiffersStopsStartUp(t *testing.T) {
	_, nc := natstest.Start(t)
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if _, err := bus.EnsureStreams(ctx, js, bus.DefaultStreamTunables()); err != nil {
		t.Fatal(err)
	}
	cfg := streamConfig(t, js, bus.StreamNotify)
	cfg.Subjects = []string{"purser.notify.*"}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	_, err := bus.EnsureStreams(ctx, js, bus.DefaultStreamTunables())
	var serr *bus.StreamsError
	if !errors.As(err, &serr) {
		t.Fatalf("got %v, want a StreamsError", err)
	}
	if len(serr.Plans) != 1 || serr.Plans[0].Name != bus.StreamNotify || serr.Plans[0].Required[0].Setting != "subjects" {
		t.Fatalf("got %v, want NOTIFY's subjects reported", err)
	}
	if got := streamConfig(t, js, bus.StreamNotify).Subjects; len(got) != 1 || got[0] != "purser.notify.*" {
		t.Fatalf("start-up changed the subjects to %v", got)
	}
	plans, err := bus.PlanStreams(ctx, js, bus.DefaultStreamTunables())
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.ApplyStreams(ctx, js, plans); err != nil {
		t.Fatal(err)
	}
	if _, err := bus.EnsureStreams(ctx, js, bus.DefaultStreamTunables()); err != nil {
		t.Fatalf("after apply: %v", err)
	}
}

func TestSizesAndAges(t *testing.T) {
	sizes := []struct {
		give string
		want int64
	}{{"512MiB", 512 << 20}, {"1GB", 1 << 30}, {"1G", 1 << 30}, {"2gib", 2 << 30}, {"1048576", 1 << 20}, {"10k", 10 << 10}}
	for _, tt := range sizes {
		got, err := bus.ParseBytes(tt.give)
		if err != nil || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", tt.give, got, err, tt.want)
		}
		if back, _ := bus.ParseBytes(bus.FormatBytes(got)); back != got {
			t.Errorf("FormatBytes(%d) = %q does not read back", got, bus.FormatBytes(got))
		}
	}
	for _, bad := range []string{"", "-1", "0", "lots", "1XB", "1.5G"} {
		if _, err := bus.ParseBytes(bad); err == nil {
			t.Errorf("ParseBytes(%q) accepted", bad)
		}
	}
	ages := []struct {
		give string
		want time.Duration
	}{{"7d", 7 * 24 * time.Hour}, {"36h", 36 * time.Hour}, {"90m", 90 * time.Minute}}
	for _, tt := range ages {
		if got, err := bus.ParseAge(tt.give); err != nil || got != tt.want {
			t.Errorf("ParseAge(%q) = %v, %v; want %v", tt.give, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "0d", "-1h", "week"} {
		if _, err := bus.ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) accepted", bad)
		}
	}
}

// A duplicate window longer than purser's is the operator's to keep; a
// shorter one would let republished messages through twice.
func TestTheDuplicateWindowMayGrowNotShrink(t *testing.T) {
	_, nc := natstest.Start(t)
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if _, err := bus.EnsureStreams(ctx, js, bus.DefaultStreamTunables()); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		give     time.Duration
		required bool
	}{{10 * time.Minute, false}, {30 * time.Second, true}} {
		cfg := streamConfig(t, js, bus.StreamTools)
		cfg.Duplicates = tt.give
		if _, err := js.UpdateStream(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		plans, err := bus.EnsureStreams(ctx, js, bus.DefaultStreamTunables())
		if got := err != nil; got != tt.required {
			t.Fatalf("duplicate window %v: error %v, want required %v", tt.give, err, tt.required)
		}
		if err := bus.ApplyStreams(ctx, js, plans); err != nil {
			t.Fatal(err)
		}
		want := max(tt.give, 2*time.Minute)
		if got := streamConfig(t, js, bus.StreamTools).Duplicates; got != want {
			t.Fatalf("after apply the window is %v, want %v", got, want)
		}
	}
}
