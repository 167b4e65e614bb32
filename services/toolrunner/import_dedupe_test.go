package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
	"github.com/purser-ai/purser/services/toolrunner/statements"
)

// inProcess reads statements with the real parsers, without their
// sandbox, for a user whose default currency is GBP.
type inProcess struct{}

func (inProcess) Parse(_ context.Context, name string, data []byte) (toolrunner.Statement, error) {
	r, err := statements.Parse(name, data, statements.Options{DefaultCurrency: "GBP", DateOrder: "dmy"})
	if err != nil {
		return toolrunner.Statement{}, &toolrunner.ImportError{Reason: err.Error()}
	}
	return statements.Lines(r), nil
}

// notes keeps what the importer publishes.
type notes struct {
	mu  sync.Mutex
	got []contracts.Notification
}

func (n *notes) Publish(_ string, msgs ...*message.Message) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range msgs {
		var v contracts.Notification
		if err := json.Unmarshal(m.Payload, &v); err != nil {
			return err
		}
		n.got = append(n.got, v)
	}
	return nil
}

func (n *notes) Close() error { return nil }

// importFile stores the file as a new document of ann's (copy names a
// second document of the same bytes) and runs its import job, twice as a
// redelivery would; it returns the notification's body.
func importFile(t *testing.T, st *store.Store, imp *toolrunner.Importer, pub *notes, name, copy string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "dedupe", name))
	if err != nil {
		t.Fatal(err)
	}
	id, sum := toolrunner.DocumentID("acme", "ann", data)
	id, sum = id+copy, sum+copy
	if _, _, err := st.PutDocument(context.Background(), store.Document{TenantID: "acme", ID: id, UserID: "ann", SHA256: sum,
		Filename: name, MediaType: "text/plain", Size: int64(len(data)), Content: data, Status: store.DocumentQueued, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(contracts.ImportJob{TenantID: "acme", UserID: "ann", DocumentID: id})
	subject, _ := bus.ImportSubject("acme", "ann")
	for range 2 { // at least once: a redelivery changes nothing
		m := message.NewMessage("job-"+id, payload)
		m.Metadata.Set(bus.MetaSubject, subject)
		if err := imp.Handle(m); err != nil {
			t.Fatalf("import %s: %v", name, err)
		}
	}
	pub.mu.Lock()
	defer pub.mu.Unlock()
	last := pub.got[len(pub.got)-1]
	if last.Kind != "import_completed" {
		t.Fatalf("import %s: %+v", name, last)
	}
	return last.Body
}

// One month of the current account as MT940 (30 lines, a genuine repeat
// among them), the same month as a CSV export whose descriptions differ,
// a CSV overlapping its end and the start of the next month (one line
// settles a coffee typed by hand the day before, one only matches a lunch
// by amount and date), the savings side of a transfer and a euro card:
// every line is counted once, and reading any file again adds nothing.
func TestStatementsOfOneMonthInSeveralFormatsAddOnlyWhatIsNew(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st := storetest.Open(t, e.DSN(t))
			pub := &notes{}
			imp := toolrunner.NewImporter(st, inProcess{}, pub, prometheus.NewRegistry(), slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return now })
			for _, x := range []store.Expense{
				{TenantID: "acme", UserID: "ann", Item: "Costa coffee", AmountMinor: 450, Currency: "GBP", Date: "2026-11-02", Category: "food"},
				{TenantID: "acme", UserID: "ann", Item: "lunch", AmountMinor: 1200, Currency: "GBP", Date: "2026-11-04", Category: "food"},
			} {
				if _, err := st.AddExpense(ctx, x); err != nil {
					t.Fatal(err)
				}
			}
			steps := []struct{ file, want string }{
				{"current-2026-10.sta", "30 new transactions; dated 2026-10-01 to 2026-10-30;"},
				{"current-2026-10.csv", "0 new transactions; dated 2026-10-01 to 2026-10-30; 30 already imported;"},
				{"current-2026-10-25-to-11-05.csv", "4 new transactions; dated 2026-10-26 to 2026-11-05; 3 already imported;"},
				{"savings-2026-10.sta", "1 new transaction; dated 2026-10-21;"},
				{"travel-eur-2026-10.sta", "2 new transactions; dated 2026-10-09 to 2026-10-10;"},
			}
			var bodies []string
			for _, s := range steps {
				body := importFile(t, st, imp, pub, s.file, "")
				if !strings.HasPrefix(body, s.want) {
					t.Errorf("%s: %q, want it to start %q", s.file, body, s.want)
				}
				bodies = append(bodies, body)
			}
			overlap := bodies[2]
			for _, want := range []string{"1 linked to what you typed ('Costa Coffee' -4.50 GBP on 2026-11-03 and your 'Costa coffee' -4.50 GBP on 2026-11-02)",
				"1 kept apart though it may be what you typed ('Pret A Manger' -12.00 GBP on 2026-11-04 and your 'lunch' -12.00 GBP on 2026-11-04)"} {
				if !strings.Contains(overlap, want) {
					t.Errorf("overlapping CSV: %q, want it to say %q", overlap, want)
				}
			}
			if !strings.Contains(bodies[3], "1 transfer between your accounts") {
				t.Errorf("savings: %q, want the transfer named", bodies[3])
			}
			for _, s := range steps {
				if body := importFile(t, st, imp, pub, s.file, "-again"); !strings.HasPrefix(body, "0 new transactions") {
					t.Errorf("%s again: %q, want nothing new", s.file, body)
				}
			}

			sum, err := st.LedgerSummary(ctx, "acme", "ann", "2026-10-01", "2026-11-30")
			if err != nil {
				t.Fatal(err)
			}
			// 30 lines of October less the transfer out, 4 of November, 2 in
			// euros and the lunch typed by hand; the coffee typed by hand is
			// its bank line; the transfer's two sides are left out.
			want := store.LedgerSummary{From: "2026-10-01", To: "2026-11-30", Count: 29 + 4 + 2 + 1, Transfers: 2,
				Spending: []store.LedgerAmount{{Currency: "EUR", Minor: 4550 + 1200}, {Currency: "GBP", Minor: 179664 + 1299 + 450 + 1200 + 999 + 1200}},
				Income:   []store.LedgerAmount{{Currency: "GBP", Minor: 250000 + 2500}}}
			if diff := cmp.Diff(want, sum, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ByCategory" }, cmp.Ignore())); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
			txs, err := st.ListTransactions(ctx, store.TransactionFilter{TenantID: "acme", UserID: "ann", From: "2026-10-03", To: "2026-10-03"})
			if err != nil {
				t.Fatal(err)
			}
			coffees := 0
			for _, x := range txs {
				if x.AmountMinor == -300 {
					coffees++
				}
				if x.Account != "GB29NWBK60161331926819" {
					t.Errorf("line %+v has no account, want the MT940's", x)
				}
			}
			if coffees != 2 {
				t.Errorf("%d coffees of 3 Oct, want the genuine repeat kept (2)", coffees)
			}
		})
	}
}

// A statement with nothing new is answered "nothing new", saying how many
// were already there, and nothing is proposed; one with new lines is
// proposed saying how many are new and how many already in the ledger.
func TestNothingNewIsAnsweredWithoutAProposal(t *testing.T) {
	october := "2026-10-01,-1299,TESCO STORES 3312\n2026-10-02,-450,COSTA COFFEE\n2026-10-02,-450,COSTA COFFEE\n"
	// The same lines as another bank export writes them.
	again := "2026-10-01,-1299,Tesco\n2026-10-02,-450,Costa\n2026-10-02,-450,Costa\n"
	mb := mailbox{msgs: map[string]toolrunner.Fetched{
		"m-first": {Subject: "October export", Files: []toolrunner.File{{Name: "october.csv", MediaType: "text/csv", Data: []byte(october)}}},
		"m-visa":  {Subject: "Your Visa statement", Files: []toolrunner.File{{Name: "visa-october.csv", MediaType: "text/csv", Data: []byte(again)}}},
		"m-more":  {Subject: "Mastercard statement", Files: []toolrunner.File{{Name: "more.csv", MediaType: "text/csv", Data: []byte(again + "2026-10-03,-800,Boots\n")}}},
	}}
	e := storetest.Engines()[0]
	s := systest.Start(t, systest.Options{DSN: e.DSN(t), Orchestrators: 1, Toolrunners: 1, Mail: mb, Parser: simpleCSV{}})
	ann := s.User("acme", "ann")
	notes := s.Watch("purser.notify.acme.ann")
	req := request("acme", "ann", "first", contracts.ToolFetchEmailAttachments, `{"message_id":"m-first"}`)
	approved(t, s, &req, "p-first")
	req.Deadline = time.Now().Add(time.Hour)
	s.SendToolRequest(req)
	notes.WaitN(1, nil)

	turn := ann.Say("Find my last Visa statement and process it")
	ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, turn)
	if want := `Nothing new in visa-october.csv: all 3 transactions are already in your ledger.`; ans.Content != want {
		t.Fatalf("answer = %q, want %q", ans.Content, want)
	}
	if ps := s.Bus.All(func(m systest.Msg) bool { return m.Type == contracts.TypeProposal }); len(ps) != 0 {
		t.Fatalf("%d proposals for a statement with nothing new", len(ps))
	}

	// With something new, the proposal says how much.
	turn = ann.Say("Find my last Mastercard statement and process it")
	p0 := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, turn)
	if p0.Tool != contracts.ToolFetchEmailAttachments || !strings.Contains(p0.Summary, "more.csv") || !strings.Contains(p0.Summary, "1 new, 3 already in your ledger") {
		t.Fatalf("proposal = %+v, want the file with 1 new and 3 already in the ledger", p0)
	}

	preview := request("acme", "ann", "pv1", contracts.ToolPreviewImport, `{"message_id":"m-more"}`)
	preview.Deadline = time.Now().Add(time.Hour)
	s.SendToolRequest(preview)
	res := s.Result("acme", "conv-ann", "pv1")
	var p contracts.ImportPreview
	if err := json.Unmarshal(res.Data, &p); err != nil || len(p.Files) != 1 {
		t.Fatalf("preview = %s %+v", res.Data, res.Error)
	}
	if f := p.Files[0]; f.New != 1 || f.Already != 3 || !strings.HasSuffix(f.Summary, "; 1 new, 3 already in your ledger") {
		t.Errorf("preview of a longer export = %+v, want 1 new and 3 already there", f)
	}
	txs, err := s.Store.ListTransactions(context.Background(), store.TransactionFilter{TenantID: "acme", UserID: "ann"})
	if err != nil || len(txs) != 3 {
		t.Fatalf("%d transactions (%v), want the first export's 3", len(txs), err)
	}
}

// preview_import is a read: a viewer may run it, it changes nothing, and
// what it counts as already there is the caller's own ledger, never
// another user's.
func TestPreviewImportReadsOnlyTheCallersLedger(t *testing.T) {
	october := "2026-10-01,-1299,TESCO\n2026-10-02,-450,COSTA\n"
	mb := mailbox{msgs: map[string]toolrunner.Fetched{
		"m-oct": {Subject: "October statement", Files: []toolrunner.File{{Name: "october.csv", MediaType: "text/csv", Data: []byte(october)}}},
	}}
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Toolrunners: 1, Mail: mb, Parser: simpleCSV{}})
	if _, err := s.Store.ImportTransactions(context.Background(), []store.Transaction{{TenantID: "acme", UserID: "ann", DocumentID: "d1", Date: "2026-10-01",
		AmountMinor: -1299, Currency: "GBP", Description: "Tesco Stores", DedupeKey: "h:other", ReviewStatus: store.ReviewOK}}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		user, role   string
		new, already int
	}{
		{"ann", contracts.RoleOwner, 1, 1},
		{"ann", contracts.RoleViewer, 1, 1},
		{"bob", contracts.RoleMember, 2, 0}, // ann's line is not bob's
	}
	for i, tt := range tests {
		id := fmt.Sprintf("pv%d", i)
		req := request("acme", tt.user, id, contracts.ToolPreviewImport, `{"message_id":"m-oct"}`, tt.role)
		req.Deadline = time.Now().Add(time.Hour)
		s.SendToolRequest(req)
		res := s.Result("acme", "conv-"+tt.user, id)
		var p contracts.ImportPreview
		if !res.OK || json.Unmarshal(res.Data, &p) != nil || len(p.Files) != 1 {
			t.Fatalf("preview by %s (%s) = %s %+v", tt.user, tt.role, res.Data, res.Error)
		}
		if f := p.Files[0]; f.New != tt.new || f.Already != tt.already {
			t.Errorf("preview by %s (%s): %d new, %d already; want %d and %d", tt.user, tt.role, f.New, f.Already, tt.new, tt.already)
		}
	}
	for _, user := range []string{"ann", "bob"} {
		txs, err := s.Store.ListTransactions(context.Background(), store.TransactionFilter{TenantID: "acme", UserID: user})
		if err != nil || len(txs) != map[string]int{"ann": 1, "bob": 0}[user] {
			t.Errorf("%s holds %d transactions after previews (%v); a preview must store nothing", user, len(txs), err)
		}
	}
}

// A bank's id names a line within its account: the same FITID in two
// accounts is two lines, and an id that already names its account is
// kept as it is.
func TestBankIDsAreQualifiedByTheirAccount(t *testing.T) {
	l := toolrunner.StatementLine{Date: "2026-10-05", AmountMinor: -300, Currency: "GBP", Description: "COFFEE", FITID: "20261005001", Account: "111"}
	other := l
	other.Account = "222"
	mt := l
	mt.FITID = "111:REF1"
	none := l
	none.Account = ""
	keys := toolrunner.DedupeKeys([]toolrunner.StatementLine{l, other, mt, none})
	want := []string{"fitid:111:20261005001", "fitid:222:20261005001", "fitid:111:REF1", "fitid:20261005001"}
	if !slices.Equal(keys, want) {
		t.Fatalf("keys = %q, want %q", keys, want)
	}
}
