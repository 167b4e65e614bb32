package toolrunner_test

import (
	"context"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// stuck is a tool that never finishes on its own (OCR of a huge scan, a
// mail server that does not answer): it gives up only when its deadline
// ends it.
func stuck(name string, kind contracts.ToolKind) toolrunner.Tool {
	return toolrunner.Tool{Name: name, Kind: kind, Deadline: 20 * time.Millisecond, OutputCap: 1 << 10,
		Run: func(ctx context.Context, _ toolrunner.Tx, _ toolrunner.Call) (toolrunner.Output, error) {
			<-ctx.Done()
			return toolrunner.Output{}, ctx.Err()
		}}
}

// A tool that runs past its deadline answers timed_out, a result the
// person can read (nothing changed, it can be tried again), never an
// internal error; a change that timed out is not made, and its approved
// proposal can still be carried out by a second try.
func TestAToolPastItsDeadlineTimesOut(t *testing.T) {
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	tools := []toolrunner.Tool{stuck(contracts.ToolGetBalance, contracts.KindRead), stuck(contracts.ToolAddExpense, contracts.KindMutation)}
	r := runnerWith(tools, toolrunner.FromStore(st), allowAll{})

	res, err := r.Run(context.Background(), request("acme", "ann", "slow-read", contracts.ToolGetBalance, `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.Error == nil || res.Error.Code != contracts.CodeTimedOut {
		t.Fatalf("slow read = %+v, want timed_out", res)
	}

	req := approvedAdd(t, st)
	res, err = r.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.OK || res.Error == nil || res.Error.Code != contracts.CodeTimedOut {
		t.Fatalf("slow change = %+v, want timed_out", res)
	}
	if rows, _ := st.ListExpenses(context.Background(), store.ExpenseFilter{TenantID: "acme", UserID: "ann"}); len(rows) != 0 {
		t.Fatalf("a change that timed out left %d expenses", len(rows))
	}
	if p, err := st.GetProposal(context.Background(), "acme", "p1"); err != nil || p.Status != store.ProposalApproved {
		t.Fatalf("proposal after the timeout = %q (%v), want still approved, to try again", p.Status, err)
	}
	// The same call again is the same answer: it is not run twice.
	again, err := r.Run(context.Background(), req)
	if err != nil || again.Error == nil || again.Error.Code != contracts.CodeTimedOut {
		t.Fatalf("the call again = %+v (%v)", again, err)
	}
}

// slowOnce is the catalog's tool name, running past its deadline on its
// first run only: a second run of the same call would succeed.
func slowOnce(t *testing.T, name string) toolrunner.Tool {
	t.Helper()
	for _, tool := range toolrunner.Catalog() {
		if tool.Name != name {
			continue
		}
		runs := 0
		run := tool.Run
		tool.Deadline = 50 * time.Millisecond
		tool.Run = func(ctx context.Context, tx toolrunner.Tx, c toolrunner.Call) (toolrunner.Output, error) {
			if runs++; runs == 1 {
				<-ctx.Done()
				return toolrunner.Output{}, ctx.Err()
			}
			return run(ctx, tx, c)
		}
		return tool
	}
	t.Fatalf("no tool %s", name)
	return toolrunner.Tool{}
}

// A change whose call was answered "timed out" keeps that answer when the
// call comes again (a redelivery), even though the proposal is still
// approved and a run now would succeed: the person was told nothing
// changed, so nothing may change under that call.
func TestAChangeAnsweredBeforeIsNotMadeWhenItsCallComesAgain(t *testing.T) {
	storetest.OnEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		r := runnerWith([]toolrunner.Tool{slowOnce(t, contracts.ToolAddExpense)}, toolrunner.FromStore(st), allowAll{})
		req := approvedAdd(t, st)
		for i := range 2 {
			res, err := r.Run(ctx, req)
			if err != nil || res.Error == nil || res.Error.Code != contracts.CodeTimedOut {
				t.Fatalf("run %d = %+v (%v), want timed_out both times", i+1, res, err)
			}
		}
		if rows, err := st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "acme", UserID: "ann"}); err != nil || len(rows) != 0 {
			t.Fatalf("expenses = %+v (%v), want none", rows, err)
		}
		if p, err := st.GetProposal(ctx, "acme", "p1"); err != nil || p.Status != store.ProposalApproved {
			t.Fatalf("proposal = %q (%v), want still approved", p.Status, err)
		}
		// A new call for the same proposal (the person tries again) is
		// a new call, and makes the change.
		req.CallID = "c2"
		if res, err := r.Run(ctx, req); err != nil || !res.OK {
			t.Fatalf("a new call = %+v (%v), want the change made", res, err)
		}
	})
}

// refuseAll is a rate limit already reached.
type refuseAll struct{}

func (refuseAll) Allow(context.Context, string, int, time.Time) (bool, time.Duration, error) {
	return false, 30 * time.Second, nil
}

// A read that ran answers a repeat of its call with what it answered
// first, even when the call would be refused now: its limit reached
// since, or its deadline passed.
func TestARepeatedReadAnswersAsItDidFirst(t *testing.T) {
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	ctx := context.Background()
	if _, err := st.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: "lunch", AmountMinor: 1250, Currency: "GBP", Date: "2026-11-20"}); err != nil {
		t.Fatal(err)
	}
	req := request("acme", "ann", "read-1", contracts.ToolGetBalance, `{"range":"this_month"}`)
	first, err := runnerOn(toolrunner.FromStore(st)).Run(ctx, req)
	if err != nil || !first.OK {
		t.Fatalf("first run = %+v (%v)", first, err)
	}
	if _, err := st.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: "dinner", AmountMinor: 3000, Currency: "GBP", Date: "2026-11-21"}); err != nil {
		t.Fatal(err)
	}
	limited := runnerWith(toolrunner.Catalog(), toolrunner.FromStore(st), refuseAll{})
	late := req
	late.Deadline = now.Add(-time.Second)
	for name, again := range map[string]func() (contracts.ToolResult, error){
		"limit reached":   func() (contracts.ToolResult, error) { return limited.Run(ctx, req) },
		"deadline passed": func() (contracts.ToolResult, error) { return runnerOn(toolrunner.FromStore(st)).Run(ctx, late) },
		"nothing refuses": func() (contracts.ToolResult, error) { return runnerOn(toolrunner.FromStore(st)).Run(ctx, req) },
	} {
		res, err := again()
		if err != nil || !res.OK || string(res.Data) != string(first.Data) {
			t.Errorf("%s: the call again = %s %+v (%v), want the first answer %s", name, res.Data, res.Error, err, first.Data)
		}
	}
	// A new call reads afresh: the dinner is in its balance.
	req.CallID = "read-2"
	if res, err := runnerOn(toolrunner.FromStore(st)).Run(ctx, req); err != nil || string(res.Data) == string(first.Data) {
		t.Fatalf("a new call = %s (%v), want a balance with the dinner", res.Data, err)
	}
}
