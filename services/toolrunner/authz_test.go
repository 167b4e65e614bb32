package toolrunner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The authorization matrix (docs/security.md, "Who may do what"): every expense and
// transaction tool, called by an owner, a member and a viewer, on the
// caller's own record, on another user's record in the same tenant, and on
// a record of another tenant. Nobody reads or changes anyone else's
// records; a viewer changes nothing; the model's arguments never widen
// what a call may reach.
func TestAuthorizationMatrix(t *testing.T) {
	type whose string
	const (
		own         whose = "own"
		otherUser   whose = "another user's"
		otherTenant whose = "another tenant's"
	)
	type caller struct{ tenant, user string }
	callers := map[whose]caller{own: {"acme", "ann"}, otherUser: {"acme", "bob"}, otherTenant: {"bravo", "eve"}}
	roles := []string{contracts.RoleOwner, contracts.RoleMember, contracts.RoleViewer}
	mutations := []string{contracts.ToolUpdateExpense, contracts.ToolDeleteExpense, contracts.ToolRecategorize, contracts.ToolUpdateTransaction, contracts.ToolUndoChange}
	reads := []string{contracts.ToolListExpenses, contracts.ToolGetBalance, contracts.ToolGetTransactions, contracts.ToolMatchEntries,
		contracts.ToolSummarizeSpending, contracts.ToolBiggestExpenses, contracts.ToolRecurringPayments, contracts.ToolGetLastChange, contracts.ToolListLedger}

	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		// bravo holds one expense of its own (#1), so an id of acme's
		// above 1 names nothing in bravo and a cross-tenant call can only
		// reach acme's row by breaking isolation.
		if _, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "bravo", UserID: "eve", Item: "eve-own", AmountMinor: 100, Currency: "GBP", Date: "2026-11-20"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "bob", Item: "bob-own", AmountMinor: 100, Currency: "GBP", Date: "2026-11-20"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Store.InsertTransactions(ctx, []store.Transaction{{TenantID: "acme", UserID: "ann", Date: "2026-11-20", AmountMinor: -4200,
			Currency: "GBP", Description: "ann-secret-transaction", DedupeKey: "k1", ReviewStatus: store.ReviewOK}}); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, role := range roles {
			for _, w := range []whose{own, otherUser, otherTenant} {
				c := callers[w]
				for _, tool := range mutations {
					n++
					item := fmt.Sprintf("ann-%d", n)
					args, changedOf := authzTarget(t, s, tool, item)
					callID := fmt.Sprintf("m%d", n)
					req := request(c.tenant, c.user, callID, tool, args, role)
					approved(t, s, &req, "p-"+callID)
					s.SendToolRequest(req)
					res := s.Result(c.tenant, "conv-"+c.user, callID)
					var want string // "" is success
					switch {
					case role == contracts.RoleViewer:
						want = contracts.CodeForbidden
					case w != own:
						want = contracts.CodeNotFound
					}
					got := ""
					if !res.OK {
						got = res.Error.Code
					}
					if got != want {
						t.Errorf("%s by %s on %s expense = %q, want %q", tool, role, w, got, want)
					}
					if want != "" && res.Error != nil && strings.Contains(res.Error.Message, item) {
						t.Errorf("%s by %s on %s expense shows it: %s %s", tool, role, w, res.Data, res.Error.Message)
					}
					if changed := changedOf(); changed != (want == "") {
						t.Errorf("%s by %s on %s record: changed = %v", tool, role, w, changed)
					}
				}
				for _, tool := range reads {
					n++
					callID := fmt.Sprintf("r%d", n)
					args := `{"range":"2026-11"}`
					if tool == contracts.ToolGetTransactions || tool == contracts.ToolGetLastChange {
						args = `{}`
					}
					if tool == contracts.ToolSummarizeSpending {
						args = `{"by":"merchant","range":"2026-11"}`
					}
					if tool == contracts.ToolMatchEntries {
						args = `{"pattern":"nn-","range":"2026-11"}` // an echo of it names no item
					}
					s.SendToolRequest(request(c.tenant, c.user, callID, tool, args, role))
					res := s.Result(c.tenant, "conv-"+c.user, callID)
					if !res.OK {
						t.Errorf("%s by %s (%s) refused: %+v", tool, role, w, res.Error)
						continue
					}
					data := string(res.Data)
					if tool == contracts.ToolGetBalance {
						// The count is the caller's own, never a tenant's.
						if want := fmt.Sprintf(`"count":%d`, ownCount(t, s, c.tenant, c.user)); !strings.Contains(data, want) {
							t.Errorf("%s by %s (%s) = %s, want %s", tool, role, w, data, want)
						}
						continue
					}
					sawAnn := strings.Contains(data, "ann-")
					if w != own && sawAnn {
						t.Errorf("%s by %s of %s sees ann's records: %s", tool, role, w, data)
					}
					if tool == contracts.ToolRecurringPayments {
						continue // ann's records recur nowhere: none is listed even to her
					}
					if w == own && !sawAnn {
						t.Errorf("%s by %s of their own records misses them: %s", tool, role, data)
					}
				}
			}
			// Adding: an owner or member adds to their own records only; a
			// viewer adds nothing.
			n++
			callID := fmt.Sprintf("a%d", n)
			req := request("acme", "bob", callID, contracts.ToolAddExpense, fmt.Sprintf(`{"item":"bob-add-%d","amount":"1.00","date":"2026-11-20"}`, n), role)
			approved(t, s, &req, "p-"+callID)
			s.SendToolRequest(req)
			res := s.Result("acme", "conv-bob", callID)
			if role == contracts.RoleViewer {
				if res.OK || res.Error.Code != contracts.CodeForbidden {
					t.Errorf("add by viewer = %+v", res)
				}
				continue
			}
			if !res.OK {
				t.Errorf("add by %s refused: %+v", role, res.Error)
			}
		}
		// Every added row belongs to the caller, never to anyone else.
		all, err := s.Store.ListExpenses(ctx, store.ExpenseFilter{TenantID: "acme", AllUsers: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range all {
			if strings.HasPrefix(e.Item, "bob-add-") && e.UserID != "bob" {
				t.Errorf("bob's add stored under %q", e.UserID)
			}
		}
	})
}

// ownCount is how many ledger entries (expenses and imported
// transactions) of November 2026 the user has.
func ownCount(t *testing.T, s *systest.System, tenant, user string) int {
	t.Helper()
	page, err := s.Store.ListLedger(context.Background(), store.LedgerFilter{TenantID: tenant, UserID: user, From: "2026-11-01", To: "2026-11-30"})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Entries)
}

// authzTarget makes a record of ann's, named item, for a mutation of the
// matrix to act on: the call's arguments, and whether the record changed.
func authzTarget(t *testing.T, s *systest.System, tool, item string) (args string, changed func() bool) {
	t.Helper()
	ctx := context.Background()
	switch tool {
	case contracts.ToolUpdateTransaction:
		if _, err := s.Store.InsertTransactions(ctx, []store.Transaction{{TenantID: "acme", UserID: "ann", DocumentID: "d-" + item, Date: "2026-11-20",
			AmountMinor: -700, Currency: "GBP", Description: item, DedupeKey: item, ReviewStatus: store.ReviewNeeds}}); err != nil {
			t.Fatal(err)
		}
		txs, err := s.Store.ListTransactions(ctx, store.TransactionFilter{TenantID: "acme", UserID: "ann", Vendor: item})
		if err != nil || len(txs) != 1 {
			t.Fatalf("transaction %s: %v %v", item, txs, err)
		}
		id := txs[0].ID
		return fmt.Sprintf(`{"id":%d,"review":"clear"}`, id), func() bool {
			after, err := s.Store.GetTransaction(ctx, "acme", "ann", id)
			return err != nil || after.ReviewStatus != store.ReviewNeeds
		}
	case contracts.ToolUndoChange:
		// An expense added through the change log, as add_expense does.
		var e store.Expense
		err := s.Store.InTx(ctx, func(tx *store.Store) error {
			var err error
			if e, err = tx.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: item, AmountMinor: 700, Currency: "GBP", Date: "2026-11-20"}); err != nil {
				return err
			}
			return tx.RecordExpenseChange(ctx, "add-"+item, nil, &e, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		last, err := s.Store.LastChange(ctx, "acme", "ann", "")
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf(`{"change_id":%d}`, last.ID), func() bool {
			_, err := s.Store.GetExpense(ctx, "acme", "ann", e.ID)
			return err != nil
		}
	}
	e, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: item, AmountMinor: 700, Currency: "GBP", Date: "2026-11-20"})
	if err != nil {
		t.Fatal(err)
	}
	args = fmt.Sprintf(`{"id":%d}`, e.ID)
	if tool == contracts.ToolUpdateExpense {
		args = fmt.Sprintf(`{"id":%d,"amount":"0.01"}`, e.ID)
	}
	if tool == contracts.ToolRecategorize {
		args = fmt.Sprintf(`{"pattern":%q,"category":"software"}`, item[1:]) // "nn-N": an echo of it names no item
	}
	return args, func() bool {
		after, err := s.Store.GetExpense(ctx, "acme", "ann", e.ID)
		return err != nil || after.AmountMinor != 700 || after.Category != ""
	}
}
