package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// eachStore runs fn on a fresh store of every engine.
func eachStore(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, storetest.Open(t, e.DSN(t)))
		})
	}
}

func putRule(t *testing.T, st *store.Store, user, pattern, category string) store.Rule {
	t.Helper()
	r, _, err := st.PutRule(context.Background(), store.Rule{TenantID: "acme", UserID: user, Pattern: pattern, Category: category})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Where several rules match, the longest pattern wins, then the oldest.
func TestRulesFirstMatchOrder(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		putRule(t, st, "ann", "amazon", "shopping")
		putRule(t, st, "ann", "amazon prime", "subscriptions")
		putRule(t, st, "ann", "prime", "entertainment")
		putRule(t, st, "ann", "tesco", "groceries")
		putRule(t, st, "ann", "shell", "transport")
		for _, c := range []struct {
			texts []string
			want  string
		}{
			{[]string{"AMAZON PRIME VIDEO"}, "subscriptions"},
			{[]string{"Prime Amazon"}, "shopping"},
			{[]string{"SHELL TESCO EXPRESS"}, "groceries"},
			{[]string{"card payment", "Shell Ltd"}, "transport"},
			{[]string{"PRIME now"}, "entertainment"},
			{[]string{"corner shop"}, ""},
		} {
			r, ok, err := st.Categorize(ctx, "acme", "ann", c.texts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.Category; got != c.want || ok != (c.want != "") {
				t.Errorf("categorize %q = %q (matched %v), want %q", c.texts, got, ok, c.want)
			}
		}
		rules, err := st.ListRules(ctx, "acme", "ann")
		if err != nil {
			t.Fatal(err)
		}
		var order []string
		for _, r := range rules {
			order = append(order, r.Pattern)
		}
		if want := []string{"amazon prime", "amazon", "prime", "tesco", "shell"}; !slices.Equal(order, want) {
			t.Fatalf("rules listed %q, want %q (the order they are tried)", order, want)
		}
		// Another person's rules file nothing of ann's.
		putRule(t, st, "bob", "corner", "groceries")
		if r, ok, _ := st.Categorize(ctx, "acme", "ann", "corner shop"); ok {
			t.Fatalf("bob's rule filed ann's entry under %q", r.Category)
		}
	})
}

// Patterns and entries compare without case or accents, on both engines
// alike (the SQL fold is the Go fold).
func TestRulesFoldAccentsAndCase(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		r := putRule(t, st, "ann", "  Café Nero ", "dining")
		if r.Pattern != "cafe nero" {
			t.Fatalf("pattern kept as %q, want %q", r.Pattern, "cafe nero")
		}
		for _, text := range []string{"CAFE NERO LONDON", "café néro", "Cafè NÉRO"} {
			if got, ok, _ := st.Categorize(ctx, "acme", "ann", text); !ok || got.Category != "dining" {
				t.Errorf("%q not filed by the cafe nero rule", text)
			}
		}
		if _, err := st.GetRule(ctx, "acme", "ann", "CAFÉ NERO"); err != nil {
			t.Fatalf("rule not found by its pattern in other letters: %v", err)
		}
		again, created, err := st.PutRule(ctx, store.Rule{TenantID: "acme", UserID: "ann", Pattern: "CAFE NÉRO", Category: "entertainment"})
		if err != nil || created || again.ID != r.ID || again.Category != "entertainment" {
			t.Fatalf("same pattern in other letters = %+v created %v (%v), want rule %d changed", again, created, err, r.ID)
		}
		for _, item := range []string{"Crème Brûlée SHOP", "CREME brulee", "cream"} {
			if _, err := st.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: item, AmountMinor: 100, Currency: "GBP", Date: "2026-11-01", Category: "other"}); err != nil {
				t.Fatal(err)
			}
		}
		n, first, err := st.MatchEntries(ctx, store.PatternFilter{TenantID: "acme", UserID: "ann", Pattern: "CRÈME"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 || len(first) != 2 {
			t.Fatalf("entries matching CRÈME = %d (%d listed), want 2", n, len(first))
		}
	})
}

// A recategorize changes the matching entries of that user, in the
// period, and nothing else.
func TestRecategorizeTouchesOnlyMatchingEntriesOfThatUser(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		add := func(tenant, user, item, date string) store.Expense {
			e, err := st.AddExpense(ctx, store.Expense{TenantID: tenant, UserID: user, Item: item, AmountMinor: 999, Currency: "GBP", Date: date, Category: "other"})
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		add("acme", "ann", "Unity Pro seat", "2026-11-03")
		add("acme", "ann", "UNITY asset store", "2026-10-03")
		add("acme", "ann", "Coffee", "2026-11-03")
		add("acme", "bob", "Unity Pro seat", "2026-11-03")
		add("bravo", "ann", "Unity Pro seat", "2026-11-03")
		if _, err := st.InsertTransactions(ctx, []store.Transaction{
			{TenantID: "acme", UserID: "ann", Date: "2026-11-05", AmountMinor: -1500, Currency: "USD", Description: "CARD 1234", Vendor: "Unity Technologies", Category: "other", DedupeKey: "k1", ReviewStatus: store.ReviewOK},
			{TenantID: "acme", UserID: "ann", Date: "2026-11-06", AmountMinor: -300, Currency: "GBP", Description: "Tesco", Category: "groceries", DedupeKey: "k2", ReviewStatus: store.ReviewOK},
		}); err != nil {
			t.Fatal(err)
		}
		f := store.PatternFilter{TenantID: "acme", UserID: "ann", Pattern: "unity"}
		if n, _, err := st.MatchEntries(ctx, f, 2); err != nil || n != 3 {
			t.Fatalf("entries matching unity = %d (%v), want 3", n, err)
		}
		nov := f
		nov.From, nov.To = "2026-11-01", "2026-11-30"
		n, first, err := st.MatchEntries(ctx, nov, 5)
		if err != nil || n != 2 || len(first) != 2 || first[0].Merchant != "Unity Technologies" {
			t.Fatalf("unity in November = %d %+v (%v), want the transaction then the expense", n, first, err)
		}
		changed, err := st.Recategorize(ctx, nov, "software", time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
		if err != nil || changed != 2 {
			t.Fatalf("recategorize = %d (%v), want 2", changed, err)
		}
		if again, _ := st.Recategorize(ctx, nov, "software", time.Time{}); again != 0 {
			t.Fatalf("a second recategorize changed %d entries, want 0", again)
		}
		categories := func(tenant, user string) []string {
			page, err := st.ListLedger(ctx, store.LedgerFilter{TenantID: tenant, UserID: user})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range page.Entries {
				out = append(out, fmt.Sprintf("%s=%s", e.Description+e.Merchant, e.Category))
			}
			slices.Sort(out)
			return out
		}
		want := []string{"CARD 1234Unity Technologies=software", "Coffee=other", "Tesco=groceries", "UNITY asset store=other", "Unity Pro seat=software"}
		if got := categories("acme", "ann"); !slices.Equal(got, want) {
			t.Errorf("ann's entries = %q, want %q", got, want)
		}
		if got := categories("acme", "bob"); !slices.Equal(got, []string{"Unity Pro seat=other"}) {
			t.Errorf("bob's entries = %q, changed by ann's recategorize", got)
		}
		if got := categories("bravo", "ann"); !slices.Equal(got, []string{"Unity Pro seat=other"}) {
			t.Errorf("another tenant's entries = %q, changed by ann's recategorize", got)
		}
	})
}

func TestCategoriesDefaultsAndOwn(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		for _, c := range []struct {
			name string
			want bool
		}{{"pets", true}, {"pets", false}, {"groceries", false}} {
			added, err := st.AddCategory(ctx, "acme", "ann", c.name, time.Time{})
			if err != nil || added != c.want {
				t.Fatalf("add category %q = %v (%v), want %v", c.name, added, err, c.want)
			}
		}
		cats, err := st.ListCategories(ctx, "acme", "ann")
		if err != nil {
			t.Fatal(err)
		}
		if len(cats) != len(store.DefaultCategories)+1 || cats[0].Name != "groceries" || cats[len(cats)-1] != (store.Category{Name: "pets", Own: true}) {
			t.Fatalf("ann's categories = %+v, want the defaults then pets", cats)
		}
		for _, c := range []struct {
			user, name string
			want       bool
		}{{"ann", "pets", true}, {"ann", "software", true}, {"bob", "pets", false}, {"ann", "boats", false}} {
			if got, err := st.HasCategory(ctx, "acme", c.user, c.name); err != nil || got != c.want {
				t.Errorf("%s has %q = %v (%v), want %v", c.user, c.name, got, err, c.want)
			}
		}
	})
}

func TestDeleteRule(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		putRule(t, st, "ann", "spotify", "subscriptions")
		putRule(t, st, "bob", "spotify", "entertainment")
		if _, err := st.DeleteRule(ctx, "acme", "ann", "Spotify"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.DeleteRule(ctx, "acme", "ann", "spotify"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("deleting a deleted rule: %v, want not found", err)
		}
		if _, ok, _ := st.Categorize(ctx, "acme", "ann", "SPOTIFY P0123"); ok {
			t.Fatal("a deleted rule still files entries")
		}
		if r, err := st.GetRule(ctx, "acme", "bob", "spotify"); err != nil || r.Category != "entertainment" {
			t.Fatalf("bob's rule after ann deleted hers = %+v (%v)", r, err)
		}
	})
}

// Entries stored before categories existed get one.
func TestMigrationGivesEveryEntryACategory(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := e.DSN(t)
			err := store.MigrateUpTo(ctx, dsn, 12, func(exec func(string, ...any) error) error {
				if err := exec(`INSERT INTO expenses (tenant_id, id, user_id, item, amount_minor, currency, date, category, created_at, updated_at)
					VALUES ('acme', 1, 'ann', 'lunch', 900, 'GBP', '2026-11-01', '', '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z'),
					('acme', 2, 'ann', 'bus', 200, 'GBP', '2026-11-01', 'transport', '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z')`); err != nil {
					return err
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			st := storetest.Open(t, dsn)
			for id, want := range map[int64]string{1: "other", 2: "transport"} {
				got, err := st.GetExpense(ctx, "acme", "ann", id)
				if err != nil || got.Category != want {
					t.Errorf("expense %d category = %q (%v), want %q", id, got.Category, err, want)
				}
			}
		})
	}
}
