package toolrunner_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/pgtest"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// A call that finds the database down is not answered, neither "timed
// out" nor "failed", which the person would read as their change refused:
// it fails as unavailable, so the bus delivers it again without counting
// it towards dead-lettering, and once the database is back the same call
// runs, once. Reads and approved changes alike.
func TestACallDuringADatabaseRestartWaitsForIt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg := pgtest.ForTest(t, ctx, "purser")
	st := storetest.Open(t, pg.URL("purser"))
	r := runnerOn(toolrunner.FromStore(st))
	req := approvedAdd(t, st)
	read := request("acme", "ann", "r1", contracts.ToolGetBalance, `{"range":"all_time"}`)

	pg.Kill()
	for _, c := range []contracts.ToolRequest{req, read} {
		res, err := r.Run(ctx, c)
		if !errors.Is(err, bus.ErrUnavailable) || !bus.BusUnavailable(err) {
			t.Fatalf("%s with the database down = %+v, %v; want no result and an unavailable error", c.Tool, res, err)
		}
	}
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := r.Run(ctx, req)
	if err != nil || !res.OK {
		t.Fatalf("the change once the database is back = %+v, %v", res, err)
	}
	if res, err := r.Run(ctx, read); err != nil || !res.OK {
		t.Fatalf("the read once the database is back = %+v, %v", res, err)
	}
	if again, err := r.Run(ctx, req); err != nil || !again.OK {
		t.Fatalf("the change delivered again = %+v, %v", again, err)
	}
	rows, err := st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "acme", UserID: "ann"})
	if err != nil || len(rows) != 1 {
		t.Fatalf("expenses after the restart = %d (%v), want the change made once", len(rows), err)
	}
}
