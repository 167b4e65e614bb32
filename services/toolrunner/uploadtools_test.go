package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/internal/uploads"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// lateSource is the uploads store of a system started after the tools
// that read it are made.
type lateSource struct{ s *uploads.Store }

func (l *lateSource) Get(ctx context.Context, tenant, user, doc string, max int64) (uploads.Manifest, []byte, error) {
	return l.s.Get(ctx, tenant, user, doc, max)
}
func (l *lateSource) PutReading(ctx context.Context, tenant, user, doc string, r []byte) error {
	return l.s.PutReading(ctx, tenant, user, doc, r)
}
func (l *lateSource) Reading(ctx context.Context, tenant, user, doc string) ([]byte, error) {
	return l.s.Reading(ctx, tenant, user, doc)
}

// receiptsOrCSV reads "RECEIPT merchant total currency date" as a receipt
// and anything else as simpleCSV's statement; it counts its reads.
type receiptsOrCSV struct{ reads *int }

func (r receiptsOrCSV) ReadUpload(ctx context.Context, name string, data []byte, _ toolrunner.ParseHints) (toolrunner.UploadDocument, error) {
	*r.reads++
	if f := strings.Fields(string(data)); len(f) == 5 && f[0] == "RECEIPT" {
		return toolrunner.UploadDocument{Kind: contracts.UploadReceipt, Receipt: &contracts.ReceiptRead{Merchant: f[1], Total: f[2], Currency: f[3], Date: f[4],
			ReadBy: "OCR", Items: []contracts.ReceiptItem{{Text: "bread", Amount: "2.10"}}}}, nil
	}
	st, err := simpleCSV{}.Parse(ctx, name, data)
	return toolrunner.UploadDocument{Kind: contracts.UploadStatement, Statement: st}, err
}

// An upload is read, imported and kept only as its owner: another person
// naming its id finds nothing, even in the same tenant. A statement is
// imported once however often it is approved; a receipt's expense keeps
// the file and its line items, and a receipt is read once.
func TestUploadsAreReadAndImportedOnlyByTheirOwner(t *testing.T) {
	statement := []byte("2026-10-01,-1299,TESCO STORES\n2026-10-02,-450,COSTA COFFEE\n")
	receipt := []byte("RECEIPT REWE 17.47 EUR 2025-10-07")
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			src, reads := &lateSource{}, 0
			up := &toolrunner.Uploads{Source: src, Reader: receiptsOrCSV{&reads}}
			tools := slices.DeleteFunc(toolrunner.Catalog(), func(t toolrunner.Tool) bool { return t.Name == contracts.ToolAddExpense })
			tools = append(tools, up.Tools(toolrunner.AddExpenseTool())...)
			s := systest.Start(t, systest.Options{DSN: e.DSN(t), Now: clock, Toolrunners: 1, Tools: tools, Parser: simpleCSV{}})
			src.s = uploads.New(s.JS)
			ctx := context.Background()
			stmtID, _ := contracts.DocumentID("acme", "ann", statement)
			rcptID, _ := contracts.DocumentID("acme", "ann", receipt)
			for id, data := range map[string][]byte{stmtID: statement, rcptID: receipt} {
				if err := src.s.Put(ctx, "acme", "ann", id, uploads.Manifest{Filename: "f-" + id[:8]}, data); err != nil {
					t.Fatal(err)
				}
			}
			as := func(user, callID, tool, args string) contracts.ToolResult {
				t.Helper()
				req := request("acme", user, callID, tool, args)
				if spec, _ := contracts.LookupTool(tool); spec.Kind == contracts.KindMutation {
					approved(t, s, &req, "p-"+callID)
				}
				req.Deadline = time.Now().Add(time.Hour)
				s.SendToolRequest(req)
				return s.Result("acme", "conv-"+user, callID)
			}
			doc := func(id string) string { return fmt.Sprintf(`{"document_id":%q}`, id) }

			for i, tool := range []string{contracts.ToolReadUpload, contracts.ToolImportUpload} {
				if res := as("bob", fmt.Sprintf("b%d", i), tool, doc(stmtID)); res.OK || res.Error.Code != contracts.CodeNotFound {
					t.Fatalf("bob's %s of ann's upload: %+v, want not found", tool, res)
				}
			}
			read := decodeData[contracts.UploadRead](t, as("ann", "r1", contracts.ToolReadUpload, doc(stmtID)))
			if read.Kind != contracts.UploadStatement || read.Statement == nil || read.Statement.New != 2 {
				t.Fatalf("ann reads her statement: %+v", read)
			}
			if got := decodeData[contracts.UploadImported](t, as("ann", "i1", contracts.ToolImportUpload, doc(stmtID))); got.Status != "queued" {
				t.Fatalf("first import: %+v, want queued", got)
			}
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				d, err := s.Store.GetDocument(ctx, "acme", stmtID)
				if err == nil && d.Status != store.DocumentQueued || time.Now().After(deadline) {
					break
				}
			}
			if got := decodeData[contracts.UploadImported](t, as("ann", "i2", contracts.ToolImportUpload, doc(stmtID))); got.Status != "duplicate" {
				t.Fatalf("second import: %+v, want duplicate", got)
			}
			if txs, err := s.Store.ListTransactions(ctx, store.TransactionFilter{TenantID: "acme", UserID: "ann"}); err != nil || len(txs) != 2 {
				t.Fatalf("ann has %d transactions (%v), want the statement's 2 once", len(txs), err)
			}

			for i := range 2 {
				r := decodeData[contracts.UploadRead](t, as("ann", fmt.Sprintf("rr%d", i), contracts.ToolReadUpload, doc(rcptID)))
				if r.Receipt == nil || r.Receipt.Total != "17.47" {
					t.Fatalf("ann reads her receipt: %+v", r)
				}
			}
			if reads != 2 { // the statement once, the receipt once
				t.Errorf("the reader ran %d times, want 2: a receipt read once is not read again", reads)
			}
			args := fmt.Sprintf(`{"item":"REWE","amount":"17.47","currency":"EUR","date":"2025-10-07","document_id":%q}`, rcptID)
			if res := as("bob", "ba", contracts.ToolAddExpense, args); res.OK || res.Error.Code != contracts.CodeNotFound {
				t.Fatalf("bob adding an expense with ann's receipt: %+v, want not found and nothing added", res)
			}
			added := decodeData[contracts.ExpenseChanged](t, as("ann", "a1", contracts.ToolAddExpense, args))
			d, err := s.Store.GetDocument(ctx, "acme", rcptID)
			if err != nil {
				t.Fatal(err)
			}
			var kept contracts.UploadRead
			if string(d.Content) != string(receipt) || json.Unmarshal([]byte(d.Reading), &kept) != nil || kept.Receipt == nil ||
				len(kept.Receipt.Items) != 1 || !strings.Contains(d.Detail, fmt.Sprint(added.Expense.ID)) {
				t.Fatalf("the receipt's document: content %q, reading %q, detail %q; want the file, its line items and the expense's number", d.Content, d.Reading, d.Detail)
			}
		})
	}
}
