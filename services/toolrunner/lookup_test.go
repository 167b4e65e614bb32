package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// list_expenses with an id looks up that one expense of the caller's,
// whatever its date; a number with no expense lists none and names the
// three of the caller's expenses whose numbers are closest to it (another
// user's expense with that number is not the caller's).
func TestListExpensesByID(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		for i, date := range []string{"2026-11-03", "2025-01-10", "2026-11-20", "2026-11-21", "2026-11-22"} {
			e := store.Expense{TenantID: "acme", UserID: "ann", Item: fmt.Sprintf("item %d", i+1), AmountMinor: int64(100 * (i + 1)), Currency: "GBP", Date: date}
			if _, err := s.Store.AddExpense(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Store.DeleteExpense(ctx, "acme", "ann", 4); err != nil {
			t.Fatal(err)
		}
		for range 9 {
			if _, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "bob", Item: "bob's", AmountMinor: 1, Currency: "GBP", Date: "2026-11-03"}); err != nil {
				t.Fatal(err)
			}
		}
		view := func(id int64, date string) contracts.ExpenseView {
			return contracts.ExpenseView{ID: id, Item: fmt.Sprintf("item %d", id), Amount: contracts.Money{Minor: 100 * id, Currency: "GBP"}, Date: date}
		}
		tests := []struct {
			name string
			give string
			want contracts.ExpenseList
		}{
			{"found outside this month", `{"id":2}`, contracts.ExpenseList{ID: 2, Expenses: []contracts.ExpenseView{view(2, "2025-01-10")},
				Totals: []contracts.Money{{Minor: 200, Currency: "GBP"}}}},
			{"range ignored", `{"id":1,"range":"2020"}`, contracts.ExpenseList{ID: 1, Expenses: []contracts.ExpenseView{view(1, "2026-11-03")},
				Totals: []contracts.Money{{Minor: 100, Currency: "GBP"}}}},
			{"deleted", `{"id":4}`, contracts.ExpenseList{ID: 4, Expenses: []contracts.ExpenseView{}, Totals: []contracts.Money{},
				Nearby: []contracts.ExpenseView{view(2, "2025-01-10"), view(3, "2026-11-20"), view(5, "2026-11-22")}}},
			{"far past the last", `{"id":99999}`, contracts.ExpenseList{ID: 99999, Expenses: []contracts.ExpenseView{}, Totals: []contracts.Money{},
				Nearby: []contracts.ExpenseView{view(2, "2025-01-10"), view(3, "2026-11-20"), view(5, "2026-11-22")}}},
			{"another user's number", `{"id":7}`, contracts.ExpenseList{ID: 7, Expenses: []contracts.ExpenseView{}, Totals: []contracts.Money{},
				Nearby: []contracts.ExpenseView{view(2, "2025-01-10"), view(3, "2026-11-20"), view(5, "2026-11-22")}}},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := fmt.Sprintf("look%d", i)
				s.SendToolRequest(request("acme", "ann", id, contracts.ToolListExpenses, tt.give))
				res := s.Result("acme", "conv-ann", id)
				if !res.OK {
					t.Fatalf("list_expenses refused: %+v", res.Error)
				}
				var got contracts.ExpenseList
				if err := json.Unmarshal(res.Data, &got); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("lookup (-want +got):\n%s", diff)
				}
			})
		}
	})
}
