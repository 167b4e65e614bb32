package toolrunner

import (
	"context"
	"testing"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// An imported line is filed by the person's first matching rule, else
// under the category its statement gave (kept as categories are: lower
// case), else under "other".
func TestImportedLinesAreFiledByRulesThenTheStatement(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fileLines(t, storetest.Open(t, e.DSN(t)))
		})
	}
}

func fileLines(t *testing.T, st *store.Store) {
	ctx := context.Background()
	for p, c := range map[string]string{"tesco": "groceries", "amazon prime": "subscriptions", "amazon": "shopping"} {
		if _, _, err := st.PutRule(ctx, store.Rule{TenantID: "acme", UserID: "ann", Pattern: p, Category: c}); err != nil {
			t.Fatal(err)
		}
	}
	lines := []store.Transaction{
		{Description: "TESCO STORES 2041", Category: "Shopping"},
		{Description: "CARD 1234", Vendor: "Amazon Prime", Category: ""},
		{Description: "AMAZON MKTPLACE", Category: ""},
		{Description: "Costa Coffee", Category: "Eating  Out"},
		{Description: "BANK FEE", Category: ""},
	}
	for i := range lines {
		lines[i].TenantID, lines[i].UserID = "acme", "ann"
	}
	if err := st.InTx(ctx, func(tx *store.Store) error { return categorizeLines(ctx, tx, lines) }); err != nil {
		t.Fatal(err)
	}
	want := []string{"groceries", "subscriptions", "shopping", "eating out", "other"}
	for i, l := range lines {
		if l.Category != want[i] {
			t.Errorf("%s filed under %q, want %q", l.Description+l.Vendor, l.Category, want[i])
		}
	}
	if err := categorizeLines(ctx, st, nil); err != nil {
		t.Fatalf("no lines: %v", err)
	}
}
