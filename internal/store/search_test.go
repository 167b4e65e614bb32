package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// seedSearch gives ann of t1 expenses, bank lines, a receipt and a
// conversation, and bob the same words, which ann must never find.
func seedSearch(t *testing.T, st *store.Store) {
	t.Helper()
	ctx := context.Background()
	for _, user := range []string{"ann", "bob"} {
		// Bob's rows say bob where ann's do not, so that a test can
		// tell whose a hit is.
		mark, category := "", "dining"
		if user == "bob" {
			mark, category = " bob", "bob"
		}
		for _, e := range []store.Expense{
			{TenantID: "t1", UserID: user, Item: "Café au lait", AmountMinor: 350, Currency: "EUR", Date: "2026-11-01", Category: category},
			{TenantID: "t1", UserID: user, Item: "landlord rent", AmountMinor: 90000, Currency: "GBP", Date: "2026-11-02", Category: category},
		} {
			if _, err := st.AddExpense(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		var txs []store.Transaction
		for i, line := range []struct{ desc, vendor, date string }{
			{"AMZN Mktp UK*2K3 card payment", "AMZN Mktp UK", "2026-10-03"},
			{"TESCO STORES 2231", "Tesco", "2026-10-04"},
			{"TESCO STORES 2231", "Tesco", "2026-10-11"},
			{"HMRC SELF ASSESSMENT", "HMRC", "2026-01-31"},
			{"COSTCO WHOLESALE", "Costco", "2020-06-01"},
		} {
			txs = append(txs, store.Transaction{TenantID: "t1", UserID: user, DocumentID: "doc-" + user, Date: line.date, AmountMinor: -1000 - int64(i),
				Currency: "GBP", Description: line.desc, Vendor: line.vendor, Category: "other", DedupeKey: fmt.Sprint(i), ReviewStatus: store.ReviewOK})
		}
		if _, err := st.InsertTransactions(ctx, txs); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.PutDocument(ctx, store.Document{TenantID: "t1", ID: "doc-" + user, UserID: user, SHA256: "sha-" + user, Filename: "costco_receipt.pdf",
			MediaType: "application/pdf", SenderDomain: "costco.com", Status: store.DocumentImported, Reading: `{"merchant":"Costco","date":"2020-06-01","items":[{"description":"Kirkland olive oil"}]}`}); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
		if _, _, err := st.AppendUserMessage(ctx, "t1", user, "c1", "m1-"+user, "title", []byte(`{"type":"user_message","conversation_id":"c1","user_message":{"text":"my landlord wants the deposit back`+mark+`"}}`), at); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.AppendConversationFrame(ctx, "t1", user, "c1", "m2-"+user, []byte(`{"type":"tool_start","conversation_id":"c1","tool":{"call_id":"x","tool":"list_ledger","status":"started"}}`), at); err != nil {
			t.Fatal(err)
		}
	}
	indexAll(t, st)
}

// indexAll runs the indexer's rounds until one takes nothing.
func indexAll(t *testing.T, st *store.Store) {
	t.Helper()
	for {
		n, err := st.IndexSearch(context.Background(), 100)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
}

func titles(hits []store.SearchHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Kind+":"+h.Title)
	}
	return out
}

func TestSearchLexical(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			st := storetest.Open(t, eng.DSN(t))
			seedSearch(t, st)
			ctx := context.Background()
			search := func(q string, kinds ...string) []store.SearchHit {
				t.Helper()
				hits, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "t1", UserID: "ann", Query: q, Kinds: kinds, Limit: 10})
				if err != nil {
					t.Fatalf("search %q: %v", q, err)
				}
				return hits
			}
			tests := []struct {
				give  string
				kinds []string
				want  []string // each must be among the hits
				count int      // exact number of hits, -1 for any
			}{
				{give: "tesco", want: []string{"entry:Tesco"}, count: 2},
				{give: "cafe", want: []string{"entry:Café au lait"}, count: 1},
				{give: "CAFÉ", want: []string{"entry:Café au lait"}, count: 1},
				{give: "amazon", want: []string{"entry:AMZN Mktp UK"}, count: 1},
				{give: "amzn", want: []string{"entry:AMZN Mktp UK"}, count: 1},
				{give: "tax office", want: []string{"entry:HMRC"}, count: 1},
				{give: "find my payments to Tesco", want: []string{"entry:Tesco"}, count: 2},
				{give: "costco receipts 2020", kinds: []string{store.SearchDocument}, want: []string{"document:costco_receipt.pdf"}, count: 1},
				{give: "olive", want: []string{"document:costco_receipt.pdf"}, count: 1},
				{give: "landlord", kinds: []string{store.SearchMessage}, want: []string{"message:You: my landlord wants the deposit back"}, count: 1},
				{give: "land", want: []string{"entry:landlord rent", "message:You: my landlord wants the deposit back"}, count: 2},
				{give: "list_ledger", count: 0},
			}
			for _, tt := range tests {
				got := search(tt.give, tt.kinds...)
				for _, w := range tt.want {
					if !slices.Contains(titles(got), w) {
						t.Errorf("search %q = %v, want %q among them", tt.give, titles(got), w)
					}
				}
				if tt.count >= 0 && len(got) != tt.count {
					t.Errorf("search %q = %d hits %v, want %d", tt.give, len(got), titles(got), tt.count)
				}
			}
		})
	}
}

// TestSearchAnyQueryIsSafe asks for what an FTS or SQL parser could
// misread: each gives hits or none, never an error.
func TestSearchAnyQueryIsSafe(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			st := storetest.Open(t, eng.DSN(t))
			seedSearch(t, st)
			for _, q := range []string{
				`"tesco`, `'tesco'`, `tesco"*`, `tesco AND OR NOT`, `NEAR(tesco rent)`, `*`, `^tesco`, `body:tesco`, `-tesco`,
				`tesco & rent | !x`, `'; DROP TABLE search_docs; --`, `) OR 1=1 --`, strings.Repeat("tesco ", 2000), "", "   ",
				"日本語", "العربية", "\x00", "\xff\xfe", `tesco:*`, `<->`, `a:* & b`,
			} {
				hits, err := st.SearchLexical(context.Background(), store.SearchFilter{TenantID: "t1", UserID: "ann", Query: q, Limit: 10})
				if err != nil {
					t.Errorf("search %.40q: %v", q, err)
				}
				for _, h := range hits {
					if strings.Contains(h.Title+h.Snippet+h.Ref+h.Parent, "bob") {
						t.Errorf("search %.40q found bob's %s %s", q, h.Kind, h.Ref)
					}
				}
			}
			hits, err := st.SearchLexical(context.Background(), store.SearchFilter{TenantID: "t1", UserID: "ann", Query: "tesco", Limit: 1000})
			if err != nil || len(hits) != 2 {
				t.Errorf("a limit past the bound: %d hits, %v", len(hits), err)
			}
		})
	}
}

// TestSearchNeverCrossesPeople checks each kind: bob's words are ann's
// words, and ann's search finds only her own rows.
func TestSearchNeverCrossesPeople(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			st := storetest.Open(t, eng.DSN(t))
			seedSearch(t, st)
			ctx := context.Background()
			for _, user := range []string{"ann", "bob"} {
				for _, kind := range []string{store.SearchEntry, store.SearchDocument, store.SearchMessage} {
					hits, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "t1", UserID: user, Query: "tesco costco landlord", Kinds: []string{kind}, Limit: 50})
					if err != nil {
						t.Fatal(err)
					}
					if len(hits) == 0 {
						t.Fatalf("%s found no %s", user, kind)
					}
					for _, h := range hits {
						bobs := strings.Contains(h.Title+h.Snippet+h.Ref+h.Parent, "bob")
						if bobs != (user == "bob") {
							t.Errorf("%s found %s %s %q %q", user, h.Kind, h.Ref, h.Title, h.Snippet)
						}
					}
				}
			}
			other, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "t2", UserID: "ann", Query: "tesco", Limit: 50})
			if err != nil || len(other) != 0 {
				t.Errorf("ann of another tenant found %d, %v", len(other), err)
			}
		})
	}
}

// TestSearchFollowsChanges: a changed entry is found by its new words
// only, a deleted one not at all, and a reindex changes nothing.
func TestSearchFollowsChanges(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			st := storetest.Open(t, eng.DSN(t))
			ctx := context.Background()
			e, err := st.AddExpense(ctx, store.Expense{TenantID: "t1", UserID: "ann", Item: "plumber", AmountMinor: 5000, Currency: "GBP", Date: "2026-11-01", Category: "housing"})
			if err != nil {
				t.Fatal(err)
			}
			count := func(q string) int {
				t.Helper()
				if queued, err := st.SearchQueued(ctx, "t1", "ann"); err != nil {
					t.Fatal(err)
				} else if queued {
					if _, err := st.IndexSearchFor(ctx, "t1", "ann", 100); err != nil {
						t.Fatal(err)
					}
				}
				hits, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "t1", UserID: "ann", Query: q, Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				return len(hits)
			}
			if got := count("plumber"); got != 1 {
				t.Fatalf("new expense: %d hits", got)
			}
			e.Item = "electrician"
			if _, err := st.UpdateExpense(ctx, e); err != nil {
				t.Fatal(err)
			}
			if a, b := count("plumber"), count("electrician"); a != 0 || b != 1 {
				t.Errorf("after the change: plumber %d, electrician %d", a, b)
			}
			if _, err := st.Reindex(ctx); err != nil {
				t.Fatal(err)
			}
			if got := count("electrician"); got != 1 {
				t.Errorf("after a reindex: %d hits", got)
			}
			if err := st.DeleteExpense(ctx, "t1", "ann", e.ID); err != nil {
				t.Fatal(err)
			}
			if got := count("electrician"); got != 0 {
				t.Errorf("after the delete: %d hits", got)
			}
		})
	}
}

// TestSearchOthersNewerRowsDoNotHideMine: bob's newer lines holding the
// word outnumber what a search ranks, and ann still finds her own older
// ones (the person's filter comes before the bound on ranked rows, not
// after it).
func TestSearchOthersNewerRowsDoNotHideMine(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			st := storetest.Open(t, eng.DSN(t))
			ctx := context.Background()
			line := func(user string, i int) store.Transaction {
				return store.Transaction{TenantID: "t1", UserID: user, DocumentID: "doc-" + user, Date: "2026-10-01", AmountMinor: -100,
					Currency: "GBP", Description: fmt.Sprintf("TESCO STORES %d", i), Vendor: "Tesco", Category: "other",
					DedupeKey: fmt.Sprint(i), ReviewStatus: store.ReviewOK}
			}
			if _, err := st.InsertTransactions(ctx, []store.Transaction{line("ann", 1), line("ann", 2)}); err != nil {
				t.Fatal(err)
			}
			var bobs []store.Transaction
			for i := range 2100 {
				bobs = append(bobs, line("bob", i))
			}
			if _, err := st.InsertTransactions(ctx, bobs); err != nil {
				t.Fatal(err)
			}
			for {
				n, err := st.IndexSearch(ctx, 1000)
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
			}
			// As the indexer does when a burst ends.
			if err := st.OptimizeSearch(ctx); err != nil {
				t.Fatal(err)
			}
			hits, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "t1", UserID: "ann", Query: "tesco", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) != 2 {
				t.Errorf("ann found %d of her 2 Tesco lines: %v", len(hits), titles(hits))
			}
		})
	}
}

// Of a conversation's frames, only those a person reads as the
// conversation (their messages, the answers and questions) wait for the
// search indexer; tool progress and proposals never did reach the index,
// and no longer cost the indexer a pass. Each is still found by a search
// when it is a message.
func TestSearchQueuesOnlyMessageFrames(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
		for i, p := range []string{
			`{"type":"user_message","conversation_id":"c1","user_message":{"text":"how much on parking"}}`,
			`{"type":"tool_start","conversation_id":"c1","tool":{"call_id":"x","tool":"list_ledger","status":"started"}}`,
			`{"type":"tool_result","conversation_id":"c1","tool":{"call_id":"x","tool":"list_ledger","status":"ok"}}`,
			`{"type":"proposal","conversation_id":"c1","proposal":{"id":"p1","summary":"Add parking £4.00?"}}`,
			`{"type":"answer","conversation_id":"c1","answer":{"content":"You spent £4.00 on parking."}}`,
		} {
			if _, _, err := st.AppendConversationFrame(ctx, "t1", "ann", "c1", fmt.Sprint("e", i), []byte(p), at); err != nil {
				t.Fatal(err)
			}
		}
		// Postgres queues the 2 messages; SQLite reads the 5 frames past
		// its mark, and indexes the same 2.
		if n, err := st.IndexSearch(ctx, 100); err != nil || n < 2 {
			t.Fatalf("the indexer took %d changes (%v), want at least the 2 messages", n, err)
		}
		if n, err := st.IndexSearch(ctx, 100); err != nil || n != 0 {
			t.Fatalf("the indexer's second pass took %d changes (%v), want none left", n, err)
		}
		hits, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "t1", UserID: "ann", Query: "parking", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := titles(hits); len(got) != 2 {
			t.Errorf("search finds %v, want the question and the answer", got)
		}
		for _, q := range []string{"list_ledger", "Add"} {
			if hits, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "t1", UserID: "ann", Query: q, Limit: 10}); err != nil || len(hits) != 0 {
				t.Errorf("search for %q finds %v (%v): tool progress and proposals are not messages", q, titles(hits), err)
			}
		}
	})
}

// TestMessagesAreFoundOnceBeforeAndAfterTheIndexerPasses: a person's new
// message is found by their search before the indexer's pass (which runs
// the person's part first), and found once after it, as is another
// person's; a reindex changes nothing.
func TestMessagesAreFoundOnceBeforeAndAfterTheIndexerPasses(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		at := time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)
		for _, m := range []struct{ user, text string }{{"ann", "parking at the station"}, {"bob", "parking fine in town"}} {
			p := fmt.Sprintf(`{"type":"user_message","conversation_id":"c1","user_message":{"text":%q}}`, m.text)
			if _, _, err := st.AppendConversationFrame(ctx, "t1", m.user, "c1", "e-"+m.user, []byte(p), at); err != nil {
				t.Fatal(err)
			}
		}
		hits := func(user string) int {
			t.Helper()
			h, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "t1", UserID: user, Query: "parking", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			return len(h)
		}
		if queued, err := st.SearchQueued(ctx, "t1", "ann"); err != nil || !queued {
			t.Fatalf("ann's new message waits for the index: %v, %v; want true", queued, err)
		}
		if _, err := st.IndexSearchFor(ctx, "t1", "ann", 100); err != nil {
			t.Fatal(err)
		}
		if a, b := hits("ann"), hits("bob"); a != 1 || b != 0 {
			t.Fatalf("after ann's part: ann finds %d, bob %d; want 1 and 0 (bob's waits for the pass)", a, b)
		}
		indexAll(t, st)
		if a, b := hits("ann"), hits("bob"); a != 1 || b != 1 {
			t.Errorf("after the pass: ann finds %d, bob %d; want each their one message", a, b)
		}
		for _, u := range []string{"ann", "bob"} {
			if queued, err := st.SearchQueued(ctx, "t1", u); err != nil || queued {
				t.Errorf("%s has changes waiting after the pass: %v, %v", u, queued, err)
			}
		}
		if _, err := st.Reindex(ctx); err != nil {
			t.Fatal(err)
		}
		indexAll(t, st)
		if a, b := hits("ann"), hits("bob"); a != 1 || b != 1 {
			t.Errorf("after a reindex: ann finds %d, bob %d; want 1 each", a, b)
		}
	})
}

// TestMessagesQueuedBeforeTheMarkAreIndexedOnce: on SQLite, a message
// stored before migration 00024 (queued by the trigger it drops) is
// indexed from the queue, not read again past the mark, and one stored
// after is read past it.
func TestMessagesQueuedBeforeTheMarkAreIndexedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.SQLiteDSN(t)
	err := store.MigrateUpTo(ctx, dsn, 23, func(exec func(string, ...any) error) error {
		return exec(`INSERT INTO frames (tenant_id, user_id, seq, event_id, payload, created_at, conversation_id, turn_id)
			VALUES ('t1', 'ann', 1, 'e1', ?, '2026-11-01T09:00:00Z', 'c1', '')`,
			[]byte(`{"type":"user_message","conversation_id":"c1","user_message":{"text":"parking before"}}`))
	})
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t, dsn)
	p := []byte(`{"type":"user_message","conversation_id":"c1","user_message":{"text":"parking after"}}`)
	if _, _, err := st.AppendConversationFrame(ctx, "t1", "ann", "c1", "e2", p, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The queued row and the one frame past the mark: two changes, not
	// three (the first frame is not read past the mark).
	if n, err := st.IndexSearch(ctx, 100); err != nil || n != 2 {
		t.Fatalf("the first pass took %d changes (%v); want the queued message and the new one", n, err)
	}
	h, err := st.SearchLexical(ctx, store.SearchFilter{TenantID: "t1", UserID: "ann", Query: "parking", Limit: 10})
	if err != nil || len(h) != 2 {
		t.Errorf("ann finds %v (%v); want both messages", titles(h), err)
	}
}
