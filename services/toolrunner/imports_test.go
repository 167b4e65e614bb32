package toolrunner_test

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// mailbox is an in-memory mailbox for one user.
// mailbox is a fake mail provider. Search ranks matches in a fixed order,
// newest message id (largest) first, as the real ranking orders ties by a
// stable key: ranging over the map made the first match random.
type mailbox struct{ msgs map[string]toolrunner.Fetched }

func (m mailbox) Search(_ context.Context, tenant, user, query string, _, limit int, now time.Time) ([]contracts.MailSummary, error) {
	var out []contracts.MailSummary
	ids := slices.Sorted(maps.Keys(m.msgs))
	slices.Reverse(ids)
	for _, id := range ids {
		f := m.msgs[id]
		if !strings.Contains(strings.ToLower(f.Subject), strings.Fields(strings.ToLower(query))[0]) {
			continue
		}
		var names []string
		for _, a := range f.Files {
			names = append(names, a.Name)
		}
		from := cmp.Or(f.From, "statements@bank.example")
		out = append(out, contracts.MailSummary{ID: id, From: from, Subject: f.Subject, Date: now.Add(-24 * time.Hour), Attachments: names, Score: 1})
	}
	return out[:min(limit, len(out))], nil
}

func (m mailbox) Fetch(_ context.Context, tenant, user, id string) (toolrunner.Fetched, error) {
	f, ok := m.msgs[id]
	if !ok {
		return toolrunner.Fetched{}, toolrunner.ErrNoMessage
	}
	return f, nil
}

// simpleCSV parses "date,amount in minor units,description" lines; the
// real parsers and their sandbox are tested in package importer.
type simpleCSV struct{}

func (simpleCSV) Parse(_ context.Context, name string, data []byte) (toolrunner.Statement, error) {
	recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		return toolrunner.Statement{}, &toolrunner.ImportError{Reason: "not a statement we can read: " + err.Error()}
	}
	var st toolrunner.Statement
	for _, r := range recs {
		var minor int64
		for _, c := range strings.TrimPrefix(r[1], "-") {
			minor = minor*10 + int64(c-'0')
		}
		if strings.HasPrefix(r[1], "-") {
			minor = -minor
		}
		st.Transactions = append(st.Transactions, toolrunner.StatementLine{Date: r[0], AmountMinor: minor, Currency: "GBP", Description: r[2],
			NeedsReview: minor < -100000})
	}
	return st, nil
}

func TestStatementFlowEndToEnd(t *testing.T) {
	statement := "2026-10-01,-1299,TESCO STORES\n2026-10-02,-450,COSTA COFFEE\n2026-10-03,-250000,CAR DEALER\n"
	mb := mailbox{msgs: map[string]toolrunner.Fetched{
		"m-visa": {Subject: "Your Visa statement", Files: []toolrunner.File{{Name: "september.csv", MediaType: "text/csv", Data: []byte(statement)}}},
		"m-copy": {Subject: "Visa statement (copy)", Files: []toolrunner.File{{Name: "september-copy.csv", MediaType: "text/csv", Data: []byte(statement)}}},
		"m-bad":  {Subject: "Broken statement", Files: []toolrunner.File{{Name: "broken.csv", Data: []byte("a,\"b\n")}}},
	}}
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			s := systest.Start(t, systest.Options{DSN: e.DSN(t), Orchestrators: 1, Toolrunners: 1, Mail: mb, Parser: simpleCSV{}})
			ann := s.User("acme", "ann")
			notes := s.Watch("purser.notify.acme.ann")

			turn := ann.Say("Find my last Visa statement and process it")
			p := systest.Expect[contracts.Proposal](ann, contracts.TypeProposal, turn)
			if p.Tool != contracts.ToolFetchEmailAttachments || !strings.Contains(p.Summary, "september") {
				t.Fatalf("proposal = %+v", p)
			}
			approve := ann.Confirm(p.ProposalID, "approve", nil)
			ans := systest.Expect[contracts.Answer](ann, contracts.TypeAnswer, approve)
			if !strings.Contains(ans.Content, "september.csv") {
				t.Fatalf("answer = %q", ans.Content)
			}
			note := notes.WaitN(1, nil)[0]
			// The notification is part of the approving turn's trace.
			if got := note.Header.Get(bus.HeaderCorrelation); got != approve {
				t.Errorf("notification correlation = %q, want the approving turn %q", got, approve)
			}
			if got := note.Header.Get(bus.HeaderConversation); got != ann.Conversation {
				t.Errorf("notification conversation = %q, want %q", got, ann.Conversation)
			}
			if a, b := note.Header.Get(bus.HeaderTraceparent), bus.Traceparent(approve, "x"); len(a) < 36 || a[:36] != b[:36] {
				t.Errorf("notification traceparent %q is not in the turn's trace (%q...)", a, b[:36])
			}
			n := systest.Decode[contracts.Notification](t, note)
			if n.Kind != "import_completed" || n.Title != "Imported 3 transactions from september.csv" || !strings.Contains(n.Body, "1 to review") {
				t.Fatalf("notification = %+v", n)
			}
			txs, err := s.Store.ListTransactions(context.Background(), store.TransactionFilter{TenantID: "acme", UserID: "ann"})
			if err != nil || len(txs) != 3 {
				t.Fatalf("transactions = %d, %v", len(txs), err)
			}

			// The same file from another message is the same document:
			// nothing is imported twice.
			req := request("acme", "ann", "copy1", contracts.ToolFetchEmailAttachments, `{"message_id":"m-copy"}`)
			approved(t, s, &req, "p-copy")
			req.Deadline = time.Now().Add(time.Hour)
			s.SendToolRequest(req)
			res := s.Result("acme", "conv-ann", "copy1")
			if !res.OK || !strings.Contains(string(res.Data), `"status":"duplicate"`) {
				t.Fatalf("second fetch = %s %+v", res.Data, res.Error)
			}

			// A file the parser cannot read ends in a failed import the
			// user is told about.
			bad := request("acme", "ann", "bad1", contracts.ToolFetchEmailAttachments, `{"message_id":"m-bad"}`)
			approved(t, s, &bad, "p-bad")
			bad.Deadline = time.Now().Add(time.Hour)
			s.SendToolRequest(bad)
			failed := notes.WaitN(2, nil)[1]
			fn := systest.Decode[contracts.Notification](t, failed)
			if fn.Kind != "import_failed" || !strings.Contains(fn.Body, "not a statement we can read") {
				t.Fatalf("failure notification = %+v", fn)
			}
			notes.Quiet(500 * time.Millisecond)
			if got := len(notes.All(nil)); got != 2 {
				t.Fatalf("%d notifications, want 2", got)
			}
			txs, _ = s.Store.ListTransactions(context.Background(), store.TransactionFilter{TenantID: "acme", UserID: "ann"})
			if len(txs) != 3 {
				t.Fatalf("%d transactions after a duplicate and a failure, want 3", len(txs))
			}
		})
	}
}

// Two identical lines in one statement are two transactions; only the
// same lines imported again are duplicates.
func TestIdenticalLinesInOneFileAreTwoTransactions(t *testing.T) {
	pair := "2026-10-05,-300,COFFEE SHOP\n2026-10-05,-300,COFFEE SHOP\n"
	mb := mailbox{msgs: map[string]toolrunner.Fetched{
		"m-pair": {Subject: "Pair statement", Files: []toolrunner.File{{Name: "pair.csv", MediaType: "text/csv", Data: []byte(pair)}}},
		"m-next": {Subject: "Overlapping statement", Files: []toolrunner.File{{Name: "next.csv", MediaType: "text/csv",
			Data: []byte(pair + "2026-10-06,-300,COFFEE SHOP\n")}}},
	}}
	e := storetest.Engines()[0]
	s := systest.Start(t, systest.Options{DSN: e.DSN(t), Orchestrators: 1, Toolrunners: 1, Mail: mb, Parser: simpleCSV{}})
	notes := s.Watch("purser.notify.acme.ann")
	for i, msg := range []string{"m-pair", "m-next"} {
		req := request("acme", "ann", "pair"+msg, contracts.ToolFetchEmailAttachments, `{"message_id":"`+msg+`"}`)
		approved(t, s, &req, "p-"+msg)
		req.Deadline = time.Now().Add(time.Hour)
		s.SendToolRequest(req)
		n := systest.Decode[contracts.Notification](t, notes.WaitN(i+1, nil)[i])
		want := []string{"2 new transactions; dated 2026-10-05", "1 new transaction; dated 2026-10-05 to 2026-10-06; 2 already imported"}[i]
		if !strings.HasPrefix(n.Body, want) {
			t.Fatalf("import %d: %q, want it to start %q", i+1, n.Body, want)
		}
	}
	txs, err := s.Store.ListTransactions(context.Background(), store.TransactionFilter{TenantID: "acme", UserID: "ann"})
	if err != nil || len(txs) != 3 {
		t.Fatalf("%d transactions (%v), want 3", len(txs), err)
	}
}

func TestDedupeKeysCountOccurrences(t *testing.T) {
	l := toolrunner.StatementLine{Date: "2026-10-05", AmountMinor: -300, Currency: "GBP", Description: "COFFEE"}
	other := l
	other.AmountMinor = -310
	keys := toolrunner.DedupeKeys([]toolrunner.StatementLine{l, other, l, l})
	if keys[0] == keys[2] || keys[2] == keys[3] || keys[2] != keys[0]+"#2" || keys[3] != keys[0]+"#3" || keys[1] == keys[0] {
		t.Fatalf("keys = %q", keys)
	}
	again := toolrunner.DedupeKeys([]toolrunner.StatementLine{l, l})
	if again[0] != keys[0] || again[1] != keys[2] {
		t.Fatalf("a re-import gets other keys: %q vs %q", again, keys)
	}
}

// A preview always says the currency of its amounts: a file that names
// none, read for a user with no default currency, is said to be in no
// named currency instead of leaving a gap ("in ; net 996.50 ;").
func TestPreviewNamesTheCurrency(t *testing.T) {
	unknown := "the file names no currency and no default currency is set"
	tests := []struct {
		name string
		give []toolrunner.StatementLine
		want string
	}{
		{
			name: "no currency anywhere",
			give: []toolrunner.StatementLine{
				{Date: "2026-11-01", AmountMinor: 100000, Description: "salary"},
				{Date: "2026-11-03", AmountMinor: -350, Description: "coffee"},
			},
			want: "statement.csv: 2 transactions; dated 2026-11-01 to 2026-11-03; in no named currency; net 996.50 (no named currency); to check: " + unknown,
		},
		{
			name: "some lines name theirs",
			give: []toolrunner.StatementLine{
				{Date: "2026-11-01", AmountMinor: -1250, Currency: "EUR", Description: "train"},
				{Date: "2026-11-02", AmountMinor: -350, Description: "coffee"},
			},
			want: "statement.csv: 2 transactions; dated 2026-11-01 to 2026-11-02; in EUR, no named currency; net -12.50 EUR, -3.50 (no named currency); to check: " + unknown,
		},
		{
			name: "every line names its own",
			give: []toolrunner.StatementLine{{Date: "2026-11-01", AmountMinor: 99650, Currency: "GBP", Description: "salary"}},
			want: "statement.csv: 1 transaction; dated 2026-11-01; in GBP; net 996.50 GBP; to check: " + unknown,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := toolrunner.Preview("statement.csv", toolrunner.Statement{Format: "csv", Transactions: tt.give, Uncertain: []string{unknown}})
			if got != tt.want {
				t.Fatalf("preview\n got %q\nwant %q", got, tt.want)
			}
			if strings.Contains(got, "in ;") || strings.Contains(got, " ;") {
				t.Errorf("preview leaves a gap where a currency goes: %q", got)
			}
		})
	}
}

func TestPreviewSaysWhatWillBeStored(t *testing.T) {
	st := toolrunner.Statement{Format: "csv", Uncertain: []string{"nothing in the file tells day from month; dates read as month/day (your default)"},
		Transactions: []toolrunner.StatementLine{
			{Date: "2009-12-04", AmountMinor: -1250, Currency: "USD", Description: "A"},
			{Date: "2009-12-01", AmountMinor: 500, Currency: "USD", Description: "B", NeedsReview: true},
			{Date: "2009-12-02", AmountMinor: 1200, Currency: "JPY", Description: "C"},
			{Date: "2009-12-02", AmountMinor: -1250, Currency: "KWD", Description: "D"},
		}}
	got := toolrunner.Preview("statement.csv", st)
	want := "statement.csv: 4 transactions; dated 2009-12-01 to 2009-12-04; in USD, JPY, KWD; net -7.50 USD, 1200 JPY, -1.250 KWD; 1 to review; " +
		"to check: nothing in the file tells day from month; dates read as month/day (your default)"
	if got != want {
		t.Fatalf("preview\n got %q\nwant %q", got, want)
	}
}

// A mail's sender chooses its subject, its From and its file names. The
// toolrunner hands them on with no control, bidi or invisible character,
// and its notifications quote them for markdown.
func TestMailTextFromOutsideIsNeutralised(t *testing.T) {
	const (
		subject = "Your statement \x1b[8m\u200b"
		from    = "[click](https://evil.example) <statements@evil.example>"
		file    = "[september](https://evil.example) statement\u202Efdp.csv"
		plain   = "[september](https://evil.example) statementfdp.csv"
	)
	mb := mailbox{msgs: map[string]toolrunner.Fetched{
		"m-evil": {From: from, Subject: subject, Files: []toolrunner.File{{Name: file, MediaType: "text/csv", Data: []byte("2026-10-01,-1299,TESCO\n")}}},
	}}
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Toolrunners: 1, Mail: mb, Parser: simpleCSV{}})
	notes := s.Watch("purser.notify.acme.ann")

	search := request("acme", "ann", "search1", contracts.ToolSearchGmail, `{"query":"statement"}`)
	search.Deadline = time.Now().Add(time.Hour)
	s.SendToolRequest(search)
	res := s.Result("acme", "conv-ann", "search1")
	var found contracts.MailSearch
	if err := json.Unmarshal(res.Data, &found); err != nil || len(found.Messages) != 1 {
		t.Fatalf("search = %s %+v, %v", res.Data, res.Error, err)
	}
	m := found.Messages[0]
	if m.Subject != "Your statement [8m" || m.From != from || len(m.Attachments) != 1 || m.Attachments[0] != plain {
		t.Errorf("found %q from %q with %q, want the subject, sender and file name without hidden characters", m.Subject, m.From, m.Attachments)
	}
	if len(m.Previews) != 1 || !strings.HasPrefix(m.Previews[0], plain+": 1 transaction") {
		t.Errorf("previews = %q", m.Previews)
	}

	fetch := request("acme", "ann", "fetch1", contracts.ToolFetchEmailAttachments, `{"message_id":"m-evil"}`)
	approved(t, s, &fetch, "p-evil")
	fetch.Deadline = time.Now().Add(time.Hour)
	s.SendToolRequest(fetch)
	if res := s.Result("acme", "conv-ann", "fetch1"); !res.OK || !strings.Contains(string(res.Data), `"filename":"`+plain+`"`) {
		t.Fatalf("fetch = %s %+v", res.Data, res.Error)
	}
	n := systest.Decode[contracts.Notification](t, notes.WaitN(1, nil)[0])
	if want := `Imported 1 transaction from \[september\](https\://evil.example) statementfdp.csv`; n.Title != want {
		t.Errorf("notification title = %q, want %q", n.Title, want)
	}
	if !strings.Contains(string(n.Data), `"filename":"`+plain+`"`) {
		t.Errorf("notification data = %s", n.Data)
	}
	imports := request("acme", "ann", "imports1", contracts.ToolGetRecentImports, `{}`)
	imports.Deadline = time.Now().Add(time.Hour)
	s.SendToolRequest(imports)
	if res := s.Result("acme", "conv-ann", "imports1"); !strings.Contains(string(res.Data), `"filename":"`+plain+`"`) {
		t.Errorf("recent imports = %s", res.Data)
	}
}
