package prune_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/purser-ai/purser/internal/prune"
	"github.com/purser-ai/purser/internal/store/storetest"
)

func TestParseRetention(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		give, giveTenants string
		tenant            string
		want              map[prune.Kind]time.Duration
		wantErr           string
	}{
		{give: "", tenant: "acme", want: map[prune.Kind]time.Duration{prune.Documents: 0, prune.Messages: 0, prune.Audit: 0}},
		{give: "documents:365, messages:90", tenant: "acme",
			want: map[prune.Kind]time.Duration{prune.Documents: 365 * day, prune.Messages: 90 * day, prune.Audit: 0}},
		{give: "messages:90", giveTenants: "acme=messages:30,audit:400; globex=messages:off", tenant: "acme",
			want: map[prune.Kind]time.Duration{prune.Messages: 30 * day, prune.Audit: 400 * day}},
		{give: "messages:90", giveTenants: "acme=messages:30; globex=messages:off", tenant: "globex",
			want: map[prune.Kind]time.Duration{prune.Messages: 0}},
		{give: "messages:90", giveTenants: "acme=messages:30", tenant: "initech",
			want: map[prune.Kind]time.Duration{prune.Messages: 90 * day}},
		{give: "messages:0", wantErr: "PURSER_RETENTION: messages:0: want a number of days from 1 to 36500, or off"},
		{give: "messages:90d", wantErr: "PURSER_RETENTION: messages:90d: want a number of days"},
		{give: "emails:90", wantErr: `PURSER_RETENTION: unknown kind "emails" (kinds: documents, messages, audit)`},
		{give: "messages=90", wantErr: `PURSER_RETENTION: "messages=90" is not kind:days`},
		{give: "messages:9,messages:10", wantErr: "PURSER_RETENTION: messages is given twice"},
		{giveTenants: "messages:30", wantErr: `PURSER_TENANT_RETENTION: "messages:30" is not tenant=kind:days`},
		{giveTenants: "ac.me=messages:30", wantErr: `PURSER_TENANT_RETENTION: "ac.me" is not a tenant id`},
		{giveTenants: "acme=messages:30;acme=audit:5", wantErr: `PURSER_TENANT_RETENTION: tenant "acme" is given twice`},
		{giveTenants: "acme=messages:-1", wantErr: "PURSER_TENANT_RETENTION: acme: messages:-1: want a number of days"},
	}
	for _, tt := range tests {
		t.Run(tt.give+"|"+tt.giveTenants, func(t *testing.T) {
			r, err := prune.ParseRetention(tt.give, tt.giveTenants)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to say %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				if got := r.For(tt.tenant, k); got != want {
					t.Errorf("%s of %s = %s, want %s", k, tt.tenant, got, want)
				}
			}
		})
	}
}

// A pass of the notifier's kind of pruner deletes each tenant's old
// messages by its own retention, never younger than the floor, and counts
// what it deleted per table.
func TestPrunerCountsPerTableAndKeepsTenantsApart(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := storetest.Open(t, e.DSN(t))
			now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
			day := 24 * time.Hour
			// Each tenant's user has frames 100, 40 and 10 days old, and a
			// newest one of today.
			for _, tenant := range []string{"acme", "globex", "initech"} {
				for i, age := range []time.Duration{100 * day, 40 * day, 10 * day, 0} {
					if _, _, err := st.AppendFrame(ctx, tenant, "ann", fmt.Sprintf("e%d", i), []byte(`{"type":"answer"}`), now.Add(-age)); err != nil {
						t.Fatal(err)
					}
				}
			}
			r, err := prune.ParseRetention("messages:30", "globex=messages:off;initech=messages:5")
			if err != nil {
				t.Fatal(err)
			}
			reg := prometheus.NewRegistry()
			m, err := prune.NewMetrics(reg)
			if err != nil {
				t.Fatal(err)
			}
			tenants := func(ctx context.Context) ([]string, error) { return st.Tenants(ctx, "frames") }
			// initech asked for 5 days, but exactly-once keeps 20.
			job := prune.PerTenant("frames", prune.Messages, r, 20*day, tenants, st.PruneFrames)
			p := prune.New(time.Minute, m, slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now }, job,
				prune.Job{Table: "broken", Prune: func(context.Context, time.Time) (int64, error) { return 0, errors.New("store away") }})
			if err := p.Once(ctx); err == nil || !strings.Contains(err.Error(), "broken: store away") {
				t.Fatalf("pass error = %v, want the broken job named", err)
			}
			left := map[string]int{}
			for _, tenant := range []string{"acme", "globex", "initech"} {
				fs, err := st.FramesAfter(ctx, tenant, "ann", 0, 10)
				if err != nil {
					t.Fatal(err)
				}
				left[tenant] = len(fs)
			}
			if want := map[string]int{"acme": 2, "globex": 4, "initech": 2}; fmt.Sprint(left) != fmt.Sprint(want) {
				t.Errorf("frames left = %v, want %v (acme past 30 days, globex all, initech past the 20-day floor)", left, want)
			}
			if got := testutil.ToFloat64(m.Rows("frames")); got != 4 {
				t.Errorf("purser_pruned_rows_total{table=frames} = %v, want 4", got)
			}
			if got := testutil.ToFloat64(m.Errors("broken")); got != 1 {
				t.Errorf("purser_prune_errors_total{table=broken} = %v, want 1", got)
			}
			// Nothing more to prune: the counter stays.
			_ = p.Once(ctx)
			if got := testutil.ToFloat64(m.Rows("frames")); got != 4 {
				t.Errorf("after a second pass the counter = %v, want still 4", got)
			}
		})
	}
}
