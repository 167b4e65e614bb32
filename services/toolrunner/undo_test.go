package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// call sends one request of ann's (approved first when it is a mutation)
// and returns its result.
func call(t *testing.T, s *systest.System, callID, tool, args string, mutation bool) contracts.ToolResult {
	t.Helper()
	req := request("acme", "ann", callID, tool, args)
	if mutation {
		approved(t, s, &req, "p-"+callID)
	}
	s.SendToolRequest(req)
	return s.Result("acme", "conv-ann", callID)
}

func mustOK[T any](t *testing.T, res contracts.ToolResult) T {
	t.Helper()
	if !res.OK {
		t.Fatalf("%s refused: %+v", res.Tool, res.Error)
	}
	var out T
	if err := json.Unmarshal(res.Data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func annTransactions(t *testing.T, s *systest.System) []string {
	t.Helper()
	txs, err := s.Store.ListTransactions(context.Background(), store.TransactionFilter{TenantID: "acme", UserID: "ann"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tx := range txs {
		out = append(out, tx.Description)
	}
	slices.Sort(out)
	return out
}

// "Undo the last import" removes exactly the transactions that import
// added: a typed expense and an earlier import stay; a redelivered undo
// changes nothing twice, a second undo is refused, the audit log shows the
// import and its undo, and the file can be imported again afterwards.
func TestUndoTheLastImport(t *testing.T) {
	mb := mailbox{msgs: map[string]toolrunner.Fetched{
		"m-aug":  {Subject: "August statement", Files: []toolrunner.File{{Name: "aug.csv", MediaType: "text/csv", Data: []byte("2026-08-01,-90000,RENT\n")}}},
		"m-sept": {Subject: "September statement", Files: []toolrunner.File{{Name: "sept.csv", MediaType: "text/csv", Data: []byte("2026-09-01,-1299,TESCO\n2026-09-02,-450,COSTA\n")}}},
	}}
	eachEngine(t, systest.Options{Mail: mb, Parser: simpleCSV{}}, func(t *testing.T, s *systest.System) {
		notes := s.Watch("purser.notify.acme.ann")
		mustOK[contracts.ExpenseChanged](t, call(t, s, "add1", contracts.ToolAddExpense, `{"item":"typed coffee","amount":"3.00","date":"2026-09-01"}`, true))
		for i, m := range []string{"m-aug", "m-sept"} {
			mustOK[contracts.AttachmentsFetched](t, call(t, s, "fetch-"+m, contracts.ToolFetchEmailAttachments, `{"message_id":"`+m+`"}`, true))
			notes.WaitN(i+1, nil)
		}
		// A later typed change does not hide the import from "undo the last import".
		mustOK[contracts.ExpenseChanged](t, call(t, s, "add2", contracts.ToolAddExpense, `{"item":"typed tea","amount":"2.00","date":"2026-09-02"}`, true))

		last := mustOK[contracts.LastChange](t, call(t, s, "last1", contracts.ToolGetLastChange, `{"scope":"import"}`, false))
		if last.Change == nil || last.Change.Kind != "import" || last.Change.Filename != "sept.csv" || last.Change.Transactions != 2 {
			t.Fatalf("last import = %+v", last.Change)
		}
		args := fmt.Sprintf(`{"change_id":%d}`, last.Change.ID)
		req := request("acme", "ann", "undo1", contracts.ToolUndoChange, args)
		approved(t, s, &req, "p-undo1")
		s.SendToolRequest(req)
		first := s.Result("acme", "conv-ann", "undo1")
		mustOK[contracts.ChangeUndone](t, first)
		if got, want := fmt.Sprint(annTransactions(t, s)), "[RENT]"; got != want {
			t.Fatalf("transactions after undoing sept = %s, want %s", got, want)
		}
		if n := len(rows(t, s, "acme")); n != 2 {
			t.Fatalf("%d expenses after undoing an import, want the 2 typed", n)
		}

		// The same request again (a redelivery): the stored result, and
		// nothing reverted twice.
		s.SendToolRequest(req)
		again := s.Result("acme", "conv-ann", "undo1")
		if string(again.Data) != string(first.Data) || !again.OK {
			t.Fatalf("redelivered undo = %s %+v, want the first result %s", again.Data, again.Error, first.Data)
		}
		if got, want := fmt.Sprint(annTransactions(t, s)), "[RENT]"; got != want {
			t.Fatalf("transactions after a redelivered undo = %s, want %s", got, want)
		}
		// Looked up by its id, an undone change is no longer one to undo.
		byID := mustOK[contracts.LastChange](t, call(t, s, "byid", contracts.ToolGetLastChange, args, false))
		if byID.Change != nil || byID.ChangeID != last.Change.ID {
			t.Fatalf("lookup of an undone change = %+v, want none", byID)
		}
		// A new undo of the same change, under another yes, is refused.
		res := call(t, s, "undo2", contracts.ToolUndoChange, args, true)
		if res.OK || res.Error.Code != contracts.CodeProposalInvalid || !strings.Contains(res.Error.Message, "already undone") {
			t.Fatalf("second undo of one import = %s %+v", res.Data, res.Error)
		}

		entries := audit(t, s, "acme")
		if entries["fetch-m-sept"].Outcome != "ok" || entries["undo1"].Outcome != "ok" || entries["undo1"].Tool != contracts.ToolUndoChange {
			t.Fatalf("audit lacks the import or its undo: %+v / %+v", entries["fetch-m-sept"], entries["undo1"])
		}

		// Nothing else to undo among imports but aug; and sept can come back.
		last = mustOK[contracts.LastChange](t, call(t, s, "last2", contracts.ToolGetLastChange, `{"scope":"import"}`, false))
		if last.Change == nil || last.Change.Filename != "aug.csv" {
			t.Fatalf("last import after undoing sept = %+v, want aug.csv", last.Change)
		}
		fetched := mustOK[contracts.AttachmentsFetched](t, call(t, s, "fetch-again", contracts.ToolFetchEmailAttachments, `{"message_id":"m-sept"}`, true))
		if len(fetched.Documents) != 1 || fetched.Documents[0].Status != "queued" {
			t.Fatalf("importing sept again after its undo = %+v, want it queued", fetched.Documents)
		}
		notes.WaitN(3, nil)
		if got, want := fmt.Sprint(annTransactions(t, s)), "[COSTA RENT TESCO]"; got != want {
			t.Fatalf("transactions after importing sept again = %s, want %s", got, want)
		}
	})
}

// Review: a transaction marked at import is looked up by number, fixed
// and cleared by update_transaction; an undo of that fix is refused once
// the transaction changed again, and the latest fix is undone exactly.
func TestReviewAndUndoATransaction(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		if _, err := s.Store.InsertTransactions(ctx, []store.Transaction{
			{TenantID: "acme", UserID: "ann", DocumentID: "d1", Date: "2026-09-01", AmountMinor: -90000, Currency: "GBP", Description: "SO 12345", DedupeKey: "k1", ReviewStatus: store.ReviewNeeds},
			{TenantID: "acme", UserID: "ann", DocumentID: "d1", Date: "2026-09-02", AmountMinor: -450, Currency: "GBP", Description: "COSTA", Category: "coffee", DedupeKey: "k2", ReviewStatus: store.ReviewOK},
		}); err != nil {
			t.Fatal(err)
		}
		review := mustOK[contracts.TransactionList](t, call(t, s, "rev", contracts.ToolGetTransactions, `{"review_status":"needs_review"}`, false))
		if len(review.Transactions) != 1 || review.Transactions[0].Description != "SO 12345" || review.Transactions[0].ID == 0 {
			t.Fatalf("to review = %+v", review.Transactions)
		}
		id := review.Transactions[0].ID
		one := mustOK[contracts.TransactionList](t, call(t, s, "one", contracts.ToolGetTransactions, fmt.Sprintf(`{"id":%d}`, id), false))
		if len(one.Transactions) != 1 || one.Transactions[0].ID != id {
			t.Fatalf("lookup of #%d = %+v", id, one)
		}
		missing := mustOK[contracts.TransactionList](t, call(t, s, "miss", contracts.ToolGetTransactions, fmt.Sprintf(`{"id":%d}`, id+100), false))
		if len(missing.Transactions) != 0 || len(missing.Nearby) != 2 || missing.ID != id+100 {
			t.Fatalf("lookup of a missing number = %+v, want none and the 2 nearest", missing)
		}

		fixed := mustOK[contracts.TransactionChanged](t, call(t, s, "fix1", contracts.ToolUpdateTransaction, fmt.Sprintf(`{"id":%d,"category":"Rent","review":"clear"}`, id), true))
		if fixed.Transaction.Category != "rent" || fixed.Transaction.ReviewStatus != "ok" {
			t.Fatalf("fixed = %+v", fixed.Transaction)
		}
		first := mustOK[contracts.LastChange](t, call(t, s, "last1", contracts.ToolGetLastChange, `{}`, false)).Change
		if first == nil || first.Kind != "transaction_update" || first.Before.ReviewStatus != "needs_review" || first.After.Category != "rent" {
			t.Fatalf("last change = %+v", first)
		}
		mustOK[contracts.TransactionChanged](t, call(t, s, "fix2", contracts.ToolUpdateTransaction, fmt.Sprintf(`{"id":%d,"description":"Rent to landlord"}`, id), true))

		res := call(t, s, "undo-old", contracts.ToolUndoChange, fmt.Sprintf(`{"change_id":%d}`, first.ID), true)
		if res.OK || res.Error.Code != contracts.CodeProposalInvalid || !strings.Contains(res.Error.Message, fmt.Sprintf("Transaction #%d", id)) {
			t.Fatalf("undo of a fix overwritten since = %s %+v", res.Data, res.Error)
		}
		got, err := s.Store.GetTransaction(ctx, "acme", "ann", id)
		if err != nil || got.Description != "Rent to landlord" || got.Category != "rent" {
			t.Fatalf("after a refused undo: %+v %v", got, err)
		}

		latest := mustOK[contracts.LastChange](t, call(t, s, "last2", contracts.ToolGetLastChange, `{"scope":"any"}`, false)).Change
		mustOK[contracts.ChangeUndone](t, call(t, s, "undo-new", contracts.ToolUndoChange, fmt.Sprintf(`{"change_id":%d}`, latest.ID), true))
		got, _ = s.Store.GetTransaction(ctx, "acme", "ann", id)
		if got.Description != "SO 12345" || got.Category != "rent" || got.ReviewStatus != store.ReviewOK {
			t.Fatalf("after undoing the description fix: %+v, want the first fix's state", got)
		}
		other, _ := s.Store.ListTransactions(ctx, store.TransactionFilter{TenantID: "acme", UserID: "ann", Vendor: "costa"})
		if len(other) != 1 || other[0].Category != "coffee" {
			t.Fatalf("the other transaction changed: %+v", other)
		}
	})
}

// Nothing to undo is said as such: no change, and no proposal to make.
func TestNothingToUndo(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		last := mustOK[contracts.LastChange](t, call(t, s, "last", contracts.ToolGetLastChange, `{}`, false))
		if last.Change != nil || last.Scope != "any" {
			t.Fatalf("last change of a new user = %+v", last)
		}
		res := call(t, s, "undo", contracts.ToolUndoChange, `{"change_id":1}`, true)
		if res.OK || res.Error.Code != contracts.CodeNotFound {
			t.Fatalf("undo of no change = %s %+v", res.Data, res.Error)
		}
	})
}

// The whole conversation with the offline model: what needs review is
// listed with numbers, a fix is proposed showing the transaction, "undo
// the last import" proposes removing exactly that file's transactions,
// and "undo that" with nothing left of the import names the typed expense.
func TestReviewAndUndoConversation(t *testing.T) {
	statement := "2026-10-01,-1299,TESCO STORES\n2026-10-02,-450,COSTA COFFEE\n2026-10-03,-250000,CAR DEALER\n"
	mb := mailbox{msgs: map[string]toolrunner.Fetched{
		"m-visa": {Subject: "Your Visa statement", Files: []toolrunner.File{{Name: "september.csv", MediaType: "text/csv", Data: []byte(statement)}}},
	}}
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1, Mail: mb, Parser: simpleCSV{}})
	ann := s.User("acme", "ann")
	notes := s.Watch("purser.notify.acme.ann")
	say := func(text string) string { return ann.Say(text) }
	propose := func(text string) contracts.Proposal {
		t.Helper()
		turn := say(text)
		return systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, turn)
	}
	approve := func(p contracts.Proposal) string {
		t.Helper()
		return systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, ann.Confirm(p.ProposalID, "approve", nil)).Content
	}

	approve(propose("add £3 coffee today"))
	approve(propose("Find my last Visa statement and process it"))
	notes.WaitN(1, nil)

	turn := say("what needs review?")
	list := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, turn).Content
	txs, err := s.Store.ListTransactions(context.Background(), store.TransactionFilter{TenantID: "acme", UserID: "ann", ReviewStatus: store.ReviewNeeds})
	if err != nil || len(txs) != 1 {
		t.Fatalf("to review: %v %v", txs, err)
	}
	num := fmt.Sprintf("#%d", txs[0].ID)
	if !strings.Contains(list, num+" 2026-10-03 CAR DEALER") || !strings.Contains(list, "[needs review]") {
		t.Fatalf("what needs review = %q", list)
	}
	p := propose(fmt.Sprintf("fix transaction %d: it's car", txs[0].ID))
	if want := fmt.Sprintf("Change transaction %s (CAR DEALER, -£2,500.00 on 2026-10-03 (other), needs review): category other → car, mark as reviewed?", num); p.Summary != want {
		t.Fatalf("fix proposal = %q\nwant %q", p.Summary, want)
	}
	if got := approve(p); !strings.Contains(got, "Updated transaction "+num) {
		t.Fatalf("fix answer = %q", got)
	}

	p = propose("undo the last import")
	if p.Summary != "Undo the import of september.csv: remove its 3 transactions?" {
		t.Fatalf("undo proposal = %q", p.Summary)
	}
	// The import's transaction was fixed since: the undo says so and
	// removes nothing.
	if got := approve(p); !strings.Contains(got, "Transaction "+num+" 'CAR DEALER' was changed after that change") {
		t.Fatalf("undo of an import with a fixed transaction = %q", got)
	}
	if n := len(annTransactions(t, s)); n != 3 {
		t.Fatalf("%d transactions after a refused undo, want 3", n)
	}
	// Undo the fix first, then the import.
	p = propose("undo that")
	if !strings.HasPrefix(p.Summary, "Undo the change to transaction "+num+": put back CAR DEALER") {
		t.Fatalf("undo proposal = %q", p.Summary)
	}
	approve(p)
	p = propose("undo the last import")
	if got := approve(p); !strings.Contains(got, "Undone: removed the 3 transactions imported from september.csv") {
		t.Fatalf("undo answer = %q", got)
	}
	if n := len(annTransactions(t, s)); n != 0 {
		t.Fatalf("%d transactions after undoing the import, want 0", n)
	}
	p = propose("take that back")
	if !strings.HasPrefix(p.Summary, "Undo adding expense #1 (coffee, £3.00 on") {
		t.Fatalf("the next undo = %q, want the typed coffee", p.Summary)
	}
	if len(rows(t, s, "acme")) != 1 {
		t.Fatal("the typed expense went with the import")
	}
}
