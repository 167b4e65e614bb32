package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
	"github.com/purser-ai/purser/services/toolrunner/statements"
)

// Adversarial suites of the toolrunner's rules; each test names the rule
// it defends (docs/security.md, "Who may do what" and "Every tool call";
// docs/architecture.md, "The turn loop", for the confirmation gate).

// Rule: confirmation gate. A forged proposal id, another tenant's
// proposal under the same id, an expired or pending one, and a request
// that carries one approved proposal's id with another approved
// proposal's arguments (a confirm "signed" for another proposal) run
// nothing.
func TestConfirmationGateRefusesForgedForeignAndExpired(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		put := func(tenant, id, status, args string) {
			t.Helper()
			err := s.Store.CreateProposal(ctx, store.Proposal{ID: id, TenantID: tenant, UserID: "ann", ConversationID: "conv-ann", TurnID: "turn-" + id,
				Tool: contracts.ToolAddExpense, Args: json.RawMessage(args), Summary: "test", Status: status, Revision: 1,
				ExpiresAt: now.Add(15 * time.Minute), CreatedAt: now})
			if err != nil {
				t.Fatal(err)
			}
		}
		small := `{"item":"tea","amount":"2.00","currency":"GBP","date":"2026-11-22"}`
		put("bravo", "p-bravo", store.ProposalApproved, addArgs) // the same user id, in another tenant
		put("acme", "p-expired", store.ProposalExpired, addArgs)
		put("acme", "p-pending", store.ProposalPending, addArgs)
		put("acme", "p-small", store.ProposalApproved, small) // approved for £2
		put("acme", "p-big", store.ProposalApproved, addArgs) // approved for £200
		tests := []struct{ name, proposal, args string }{
			{"a forged proposal id", "p-forged", addArgs},
			{"another tenant's proposal with the same id", "p-bravo", addArgs},
			{"an expired proposal", "p-expired", addArgs},
			{"a proposal still waiting for the yes", "p-pending", addArgs},
			{"the id of one proposal with the arguments of another", "p-small", addArgs},
		}
		for i, tt := range tests {
			req := request("acme", "ann", fmt.Sprintf("g%d", i), contracts.ToolAddExpense, tt.args)
			req.ProposalID = tt.proposal
			s.SendToolRequest(req)
			res := s.Result("acme", "conv-ann", req.CallID)
			if res.OK || res.Error.Code != contracts.CodeNotConfirmed {
				t.Errorf("%s: result = %+v, want not_confirmed", tt.name, res)
			}
		}
		if got := rows(t, s, "acme"); len(got) != 0 {
			t.Fatalf("written without a matching approval: %+v", got)
		}
		if got := rows(t, s, "bravo"); len(got) != 0 {
			t.Fatalf("bravo's proposal ran: %+v", got)
		}
		for _, id := range []string{"p-bravo", "p-small", "p-big"} {
			tenant := "acme"
			if id == "p-bravo" {
				tenant = "bravo"
			}
			if p, err := s.Store.GetProposal(ctx, tenant, id); err != nil || p.Status != store.ProposalApproved {
				t.Errorf("proposal %s after the attempts = %+v, %v; want still approved", id, p, err)
			}
		}
	})
}

// staleProposals answers every proposal as approved, whatever its status
// now: what a runner reads when another replica executes the proposal
// between its check and its transaction.
type staleProposals struct{ toolrunner.Store }

func (s staleProposals) GetProposal(ctx context.Context, tenantID, id string) (store.Proposal, error) {
	p, err := s.Store.GetProposal(ctx, tenantID, id)
	p.Status = store.ProposalApproved
	return p, err
}

// Rule: confirmation gate, race on the state change. Two calls for one
// proposal that both read it as approved (a doubled confirm racing on two
// replicas) change the store once: the move from approved to executed
// commits with the change, and only one can make it.
func TestConfirmationGateRaceOnTheStateChange(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			st := storetest.Open(t, e.DSN(t))
			run := runnerOn(staleProposals{toolrunner.FromStore(st)})
			ctx := context.Background()
			req := approvedAdd(t, st)
			first, err := run.Run(ctx, req)
			if err != nil || !first.OK {
				t.Fatalf("first call = %+v, %v", first, err)
			}
			req.CallID = "c2"
			second, err := run.Run(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if second.OK || second.Error.Code != contracts.CodeProposalInvalid {
				t.Errorf("second call for the proposal = %+v, want proposal_invalid", second)
			}
			got, err := st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "acme", AllUsers: true})
			if err != nil || len(got) != 1 {
				t.Fatalf("expenses = %+v, %v; want exactly one", got, err)
			}
		})
	}
}

// runnerOn is a toolrunner of every tool over s, with no rate limit.
func runnerOn(s toolrunner.Store) *toolrunner.Runner {
	return runnerWith(toolrunner.Catalog(), s, allowAll{})
}

// runnerWith is a toolrunner of tools over s, limited by l, on the tests'
// clock.
func runnerWith(tools []toolrunner.Tool, s toolrunner.Store, l toolrunner.Limiter) *toolrunner.Runner {
	return toolrunner.New(tools, s, l, nil,
		toolrunner.NewMetrics(prometheus.NewRegistry()), slog.New(slog.NewTextHandler(io.Discard, nil)), clock)
}

// approvedAdd stores ann's approved proposal p1 to add an expense and
// returns the request (call c1) that carries it out.
func approvedAdd(t *testing.T, st *store.Store) contracts.ToolRequest {
	t.Helper()
	req := request("acme", "ann", "c1", contracts.ToolAddExpense, addArgs)
	req.ProposalID = "p1"
	if err := st.CreateProposal(context.Background(), store.Proposal{ID: "p1", TenantID: "acme", UserID: "ann", ConversationID: "conv-ann", TurnID: req.TurnID,
		Tool: req.Tool, Args: req.Args, Summary: "test", Status: store.ProposalApproved, Revision: 1, ExpiresAt: now.Add(time.Hour), CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	return req
}

// racingRedelivery is the store as a redelivered request sees it while the
// first delivery of the same call is still running: the call not yet
// stored, the proposal still approved.
type racingRedelivery struct{ toolrunner.Store }

func (s racingRedelivery) GetToolCall(context.Context, string, string) (store.ToolCall, error) {
	return store.ToolCall{}, store.ErrNotFound
}

func (s racingRedelivery) GetProposal(ctx context.Context, tenantID, id string) (store.Proposal, error) {
	p, err := s.Store.GetProposal(ctx, tenantID, id)
	p.Status = store.ProposalApproved
	return p, err
}

// Rule: one call, one result. A request redelivered while its first
// delivery still runs (a NATS restart, another replica) loses the race to
// the change, and then answers with the result the first one stored, not
// with "already made": the person was told their approved add failed
// although it was made, once (seen in make chaos-nats).
func TestRedeliveryRacingItsFirstRunAnswersWithTheStoredResult(t *testing.T) {
	storetest.OnEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		req := approvedAdd(t, st)
		first, err := runnerOn(toolrunner.FromStore(st)).Run(ctx, req)
		if err != nil || !first.OK {
			t.Fatalf("first delivery = %+v, %v", first, err)
		}
		// It read the proposal as approved before the first committed,
		// or as executed just after.
		for name, s := range map[string]toolrunner.Store{
			"proposal read as approved": racingRedelivery{toolrunner.FromStore(st)},
			// Read as executed, the proposal was moved by the first
			// delivery's commit, which stored the call's result with it.
			"proposal read as executed": toolrunner.FromStore(st),
		} {
			again, err := runnerOn(s).Run(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !again.OK || string(again.Data) != string(first.Data) {
				t.Errorf("%s: the racing redelivery = %+v (%v), want the first delivery's result %s", name, again, again.Error, first.Data)
			}
		}
		got, err := st.ListExpenses(ctx, store.ExpenseFilter{TenantID: "acme", AllUsers: true})
		if err != nil || len(got) != 1 {
			t.Fatalf("expenses = %+v, %v; want exactly one", got, err)
		}
	})
}

// Rule: ownership and tenant isolation. User ids are the tenant's own, so
// "ann" of bravo is not "ann" of acme, and expense ids are numbered per
// tenant, so both have an expense #1: what one changes or lists is never
// the other's.
func TestOwnershipSameUserIDInTwoTenants(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		acme1, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: "acme-secret", AmountMinor: 999, Currency: "GBP", Date: "2026-11-20"})
		if err != nil {
			t.Fatal(err)
		}
		acme2, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: "ann", Item: "acme-second", AmountMinor: 555, Currency: "GBP", Date: "2026-11-20"})
		if err != nil {
			t.Fatal(err)
		}
		bravo1, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "bravo", UserID: "ann", Item: "bravo-own", AmountMinor: 100, Currency: "GBP", Date: "2026-11-20"})
		if err != nil {
			t.Fatal(err)
		}
		if acme1.ID != bravo1.ID {
			t.Fatalf("ids %d and %d: the test needs the same id in both tenants", acme1.ID, bravo1.ID)
		}
		// bravo's ann changes her own #1: acme's #1 stays as it was.
		upd := request("bravo", "ann", "u1", contracts.ToolUpdateExpense, fmt.Sprintf(`{"id":%d,"amount":"0.01","item":"bravo-changed"}`, bravo1.ID))
		approved(t, s, &upd, "p-u1")
		s.SendToolRequest(upd)
		if res := s.Result("bravo", "conv-ann", "u1"); !res.OK {
			t.Fatalf("bravo's own update = %+v", res.Error)
		}
		// #2 exists only in acme: from bravo it is not found.
		for i, tool := range []string{contracts.ToolUpdateExpense, contracts.ToolDeleteExpense} {
			args := fmt.Sprintf(`{"id":%d}`, acme2.ID)
			if tool == contracts.ToolUpdateExpense {
				args = fmt.Sprintf(`{"id":%d,"amount":"0.01"}`, acme2.ID)
			}
			req := request("bravo", "ann", fmt.Sprintf("x%d", i), tool, args)
			approved(t, s, &req, "p-x"+fmt.Sprint(i))
			s.SendToolRequest(req)
			if res := s.Result("bravo", "conv-ann", req.CallID); res.OK || res.Error.Code != contracts.CodeNotFound || strings.Contains(res.Error.Message, "acme-") {
				t.Errorf("%s of acme's #%d from bravo = %+v", tool, acme2.ID, res)
			}
		}
		list := request("bravo", "ann", "l1", contracts.ToolListExpenses, `{"range":"2026-11"}`)
		s.SendToolRequest(list)
		if res := s.Result("bravo", "conv-ann", "l1"); !res.OK || strings.Contains(string(res.Data), "acme-") || !strings.Contains(string(res.Data), "bravo-changed") {
			t.Errorf("bravo's ann lists %s", res.Data)
		}
		for _, want := range []store.Expense{acme1, acme2} {
			got, err := s.Store.GetExpense(ctx, "acme", "ann", want.ID)
			if err != nil || got.AmountMinor != want.AmountMinor || got.Item != want.Item {
				t.Errorf("acme's #%d after bravo's calls = %+v, %v", want.ID, got, err)
			}
		}
	})
}

// Rule: amounts in statements keep their sign wherever it is written: a
// minus after the dollar sign, parentheses, a D or DR in a direction
// column.
func TestStatementAmountsKeepTheirSign(t *testing.T) {
	tests := []struct {
		name, csv string
		want      []int64
	}{
		{"a minus after the dollar sign", "Date,Description,Amount\n2024-03-01,SHOP,$-5.00\n2024-03-02,REFUND,$7.50\n", []int64{-500, 750}},
		{"a minus before the dollar sign", "Date,Description,Amount\n2024-03-01,SHOP,-$5.00\n2024-03-02,REFUND,$7.50\n", []int64{-500, 750}},
		{"parentheses around a dollar amount", "Date,Description,Amount\n2024-03-01,SHOP,($5.00)\n2024-03-02,REFUND,$7.50\n", []int64{-500, 750}},
		{"a D/C direction column", "Date,Description,Amount,Type\n2024-03-01,SHOP,5.00,D\n2024-03-02,SALARY,7.50,C\n", []int64{-500, 750}},
		{"a DR/CR direction column", "Date,Description,Amount,Type\n2024-03-01,SHOP,5.00,DR\n2024-03-02,SALARY,7.50,CR\n", []int64{-500, 750}},
	}
	for _, tt := range tests {
		r, err := statements.Parse("s.csv", []byte(tt.csv), statements.Options{DefaultCurrency: "USD"})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var got []int64
		for _, tx := range r.Transactions {
			got = append(got, tx.AmountMinor)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: amounts %v, want %v (layout %q, warnings %q)", tt.name, got, tt.want, r.Layout, r.Warnings)
		}
	}
}
