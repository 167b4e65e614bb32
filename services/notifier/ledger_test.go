package notifier

import (
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The ledger ops read one person's expenses and imported transactions,
// signed, with ids unique across kinds; the current month in the user's
// zone is the default range; nobody reads another's entries.
func TestLedgerRequests(t *testing.T) {
	// 23:30 UTC on 30 November is already 1 December in Tokyo.
	now := time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC)
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			st := storetest.Open(t, e.DSN(t))
			n := New(st, &recorder{}, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now })
			ctx := t.Context()
			lunch, err := st.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: "zanzibar sushi", AmountMinor: 4217, Currency: "EUR",
				Date: "2026-11-20", Category: "food", CreatedAt: now})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []store.Expense{
				{TenantID: "acme", UserID: "bob", Item: "bob's", AmountMinor: 100, Currency: "EUR", Date: "2026-11-20", Category: "food", CreatedAt: now},
				{TenantID: "evil", UserID: "ann", Item: "other tenant's", AmountMinor: 100, Currency: "EUR", Date: "2026-11-20", Category: "food", CreatedAt: now},
				{TenantID: "acme", UserID: "ann", Item: "december tea", AmountMinor: 300, Currency: "EUR", Date: "2026-12-01", Category: "food", CreatedAt: now},
			} {
				if _, err := st.AddExpense(ctx, x); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := st.InsertTransactions(ctx, []store.Transaction{{TenantID: "acme", UserID: "ann", DocumentID: "doc-7", Date: "2026-11-21",
				AmountMinor: 250000, Currency: "EUR", Description: "SALARY\u202eACME", Category: "income", DedupeKey: "k1", ReviewStatus: store.ReviewOK, CreatedAt: now}}); err != nil {
				t.Fatal(err)
			}
			txID := ask(t, n, bus.NotifierLedger(), "acme.ann", `{"from":"2026-11-21","to":"2026-11-21"}`)
			if len(txID.Entries) != 1 {
				t.Fatalf("ledger of 21 November = %+v, want the salary", txID)
			}

			got := ask(t, n, bus.NotifierLedger(), "acme.ann", `{"from":"2026-11-01","to":"2026-11-30"}`)
			want := contracts.LedgerReply{Entries: []contracts.LedgerEntry{
				{ID: txID.Entries[0].ID, Kind: contracts.LedgerKindTransaction, Date: "2026-11-21", Amount: contracts.Money{Minor: 250000, Currency: "EUR"},
					Description: "SALARYACME", Category: "income", Source: "doc-7", Links: []contracts.LedgerLink{}},
				{ID: "expense-" + strconv.FormatInt(lunch.ID, 10), Kind: contracts.LedgerKindExpense, Date: "2026-11-20", Amount: contracts.Money{Minor: -4217, Currency: "EUR"},
					Description: "zanzibar sushi", Category: "food", Links: []contracts.LedgerLink{}},
			}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("november's ledger (-want +got):\n%s", diff)
			}
			if id := got.Entries[0].ID; len(id) < len("transaction-") || id[:len("transaction-")] != "transaction-" {
				t.Errorf("transaction id = %q, want transaction-<n>", id)
			}

			page := ask(t, n, bus.NotifierLedger(), "acme.ann", `{"from":"2026-11-01","to":"2026-11-30","limit":1}`)
			if len(page.Entries) != 1 || page.NextCursor == "" {
				t.Fatalf("first page of one = %+v, want one entry and a cursor", page)
			}
			next := ask(t, n, bus.NotifierLedger(), "acme.ann", `{"from":"2026-11-01","to":"2026-11-30","limit":1,"cursor":"`+page.NextCursor+`"}`)
			if len(next.Entries) != 1 || next.Entries[0].Kind != contracts.LedgerKindExpense || next.NextCursor != "" {
				t.Errorf("second page of one = %+v, want the expense and no cursor", next)
			}

			sum := ask(t, n, bus.NotifierLedgerSummary(), "acme.ann", `{"from":"2026-11-01","to":"2026-11-30"}`)
			wantSum := contracts.LedgerSummaryReply{From: "2026-11-01", To: "2026-11-30", Count: 2,
				Spending: []contracts.Money{{Minor: 4217, Currency: "EUR"}}, Income: []contracts.Money{{Minor: 250000, Currency: "EUR"}},
				ByCategory: []contracts.CategorySpending{{Category: "food", Spending: []contracts.Money{{Minor: 4217, Currency: "EUR"}}}}}
			if diff := cmp.Diff(wantSum, sum); diff != "" {
				t.Errorf("november's summary (-want +got):\n%s", diff)
			}

			// No dates: this month in the user's zone, UTC when unset.
			if def := ask(t, n, bus.NotifierLedgerSummary(), "acme.ann", `{}`); def.From != "2026-11-01" || def.To != "2026-11-30" || def.Count != 2 {
				t.Errorf("summary with no dates, no zone = %+v, want November's", def)
			}
			if _, err := st.PutUserSettings(ctx, store.UserSettings{TenantID: "acme", UserID: "ann", Timezone: "Asia/Tokyo", UpdatedAt: now}); err != nil {
				t.Fatal(err)
			}
			def := ask(t, n, bus.NotifierLedger(), "acme.ann", `{}`)
			if len(def.Entries) != 1 || def.Entries[0].Description != "december tea" {
				t.Errorf("ledger with no dates in Tokyo = %+v, want December's tea", def)
			}
			if s := ask(t, n, bus.NotifierLedgerSummary(), "acme.ann", `{"to":"2026-12-31"}`); s.From != "2026-12-01" || s.To != "2026-12-31" {
				t.Errorf("summary with only to, in Tokyo = %s..%s, want 2026-12-01..2026-12-31", s.From, s.To)
			}

			for _, who := range []string{"acme.bob", "evil.ann"} {
				other := ask(t, n, bus.NotifierLedger(), who, `{"from":"2026-11-01","to":"2026-11-30"}`)
				for _, e := range other.Entries {
					if e.Description != "bob's" && e.Description != "other tenant's" {
						t.Errorf("%s reads %+v", who, e)
					}
				}
			}

			tests := []struct {
				name, body string
				call       func(body string) *contracts.InboxError
			}{
				{"bad cursor", `{"cursor":"2026-11-20.rent.1"}`, func(b string) *contracts.InboxError { return ask(t, n, bus.NotifierLedger(), "acme.ann", b).Error }},
				{"range backwards", `{"from":"2026-11-30","to":"2026-11-01"}`, func(b string) *contracts.InboxError { return ask(t, n, bus.NotifierLedger(), "acme.ann", b).Error }},
				{"summary backwards", `{"from":"2026-11-30","to":"2026-11-01"}`, func(b string) *contracts.InboxError {
					return ask(t, n, bus.NotifierLedgerSummary(), "acme.ann", b).Error
				}},
				{"from after this month, no to", `{"from":"2027-01-01"}`, func(b string) *contracts.InboxError { return ask(t, n, bus.NotifierLedger(), "acme.ann", b).Error }},
				{"a user in the body", `{"user_id":"bob"}`, func(b string) *contracts.InboxError { return ask(t, n, bus.NotifierLedger(), "acme.ann", b).Error }},
			}
			for _, tt := range tests {
				if got := tt.call(tt.body); got == nil || got.Code != contracts.InboxBadRequest {
					t.Errorf("%s: error %+v, want %s", tt.name, got, contracts.InboxBadRequest)
				}
			}
		})
	}
}

func TestMonthOf(t *testing.T) {
	tests := []struct {
		give      time.Time
		zone      string
		wantFirst string
		wantLast  string
	}{
		{time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC), "", "2026-11-01", "2026-11-30"},
		{time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC), "Asia/Tokyo", "2026-12-01", "2026-12-31"},
		{time.Date(2028, 2, 10, 12, 0, 0, 0, time.UTC), "Europe/London", "2028-02-01", "2028-02-29"},
		{time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC), "America/New_York", "2025-12-01", "2025-12-31"},
		{time.Date(2026, 6, 15, 0, 0, 0, 0, time.UTC), "Not/AZone", "2026-06-01", "2026-06-30"},
	}
	for _, tt := range tests {
		first, last := monthOf(tt.give, tt.zone)
		if first != tt.wantFirst || last != tt.wantLast {
			t.Errorf("monthOf(%v, %q) = %s, %s, want %s, %s", tt.give, tt.zone, first, last, tt.wantFirst, tt.wantLast)
		}
	}
}
