package toolrunner_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

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
	r := toolrunner.New(tools, toolrunner.FromStore(st), allowAll{}, nil, toolrunner.NewMetrics(prometheus.NewRegistry()),
		slog.New(slog.NewTextHandler(io.Discard, nil)), clock)

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
