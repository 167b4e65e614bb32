package notifier

import (
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// A bank line linked to the expense typed by hand lists it, and the
// expense the line; the two sides of a transfer list each other; the
// summary counts the linked pair once and says how many transfer lines
// it left out.
func TestLedgerListsLinksAndTransfers(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	n := New(st, &recorder{}, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now })
	ctx := t.Context()
	coffee, err := st.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: "costa coffee", AmountMinor: 450, Currency: "GBP", Date: "2026-11-02", CreatedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	line := func(acct, key, date string, minor int64, desc string) store.Transaction {
		return store.Transaction{TenantID: "acme", UserID: "ann", DocumentID: "doc-" + acct, Date: date, AmountMinor: minor, Currency: "GBP",
			Description: desc, DedupeKey: key, Account: acct, ReviewStatus: store.ReviewOK, CreatedAt: now}
	}
	if _, err := st.ImportTransactions(ctx, []store.Transaction{line("CUR", "c1", "2026-11-03", -450, "COSTA COFFEE"), line("CUR", "c2", "2026-11-10", -10000, "TO SAVINGS")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ImportTransactions(ctx, []store.Transaction{line("SAV", "s1", "2026-11-11", 10000, "FROM CURRENT")}); err != nil {
		t.Fatal(err)
	}
	page := ask(t, n, bus.NotifierLedger(), "acme.ann", `{"from":"2026-11-01","to":"2026-11-30"}`)
	links := map[string][]contracts.LedgerLink{}
	for _, e := range page.Entries {
		links[e.Description] = e.Links
	}
	var bank, savings, current string
	for _, e := range page.Entries {
		switch e.Description {
		case "COSTA COFFEE":
			bank = e.ID
		case "FROM CURRENT":
			savings = e.ID
		case "TO SAVINGS":
			current = e.ID
		}
	}
	want := map[string][]contracts.LedgerLink{
		"costa coffee": {{ID: bank, Kind: contracts.LedgerLinkLinked}},
		"COSTA COFFEE": {{ID: "expense-" + strconv.FormatInt(coffee.ID, 10), Kind: contracts.LedgerLinkLinked}},
		"TO SAVINGS":   {{ID: savings, Kind: contracts.LedgerLinkTransfer}},
		"FROM CURRENT": {{ID: current, Kind: contracts.LedgerLinkTransfer}},
	}
	for desc, w := range want {
		if got := links[desc]; len(got) != 1 || got[0] != w[0] {
			t.Errorf("links of %q = %+v, want %+v", desc, got, w)
		}
	}
	sum := ask(t, n, bus.NotifierLedgerSummary(), "acme.ann", `{"from":"2026-11-01","to":"2026-11-30"}`)
	if sum.Count != 1 || sum.Transfers != 2 || len(sum.Spending) != 1 || sum.Spending[0].Minor != 450 || len(sum.Income) != 0 {
		t.Errorf("summary = %+v, want the coffee once and 2 transfer lines left out", sum)
	}
}
