package toolrunner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner"
)

// TestSearchToolFindsOnlyOwnRecords: the search tool answers with the
// caller's records, each with a URL to open it, never another person's.
func TestSearchToolFindsOnlyOwnRecords(t *testing.T) {
	eachEngine(t, systest.Options{}, func(t *testing.T, s *systest.System) {
		ctx := context.Background()
		for _, user := range []string{"ann", "bob"} {
			if _, err := s.Store.AddExpense(ctx, store.Expense{TenantID: "acme", UserID: user, Item: "Tesco groceries " + user, AmountMinor: 1299,
				Currency: "GBP", Date: "2026-11-02", Category: "groceries"}); err != nil {
				t.Fatal(err)
			}
		}
		got := mustOK[contracts.SearchResults](t, call(t, s, "search1", contracts.ToolSearch, `{"query":"tesco"}`, false))
		if len(got.Results) != 1 || got.Mode != contracts.SearchLexical {
			t.Fatalf("search = %+v, want ann's one entry", got)
		}
		r := got.Results[0]
		if r.Kind != contracts.SearchKindEntry || r.Title != "Tesco groceries ann" || r.URL != "/v1/ledger/entries/"+r.ID ||
			r.Amount == nil || r.Amount.Minor != -1299 || r.Score != 1 {
			t.Errorf("result = %+v", r)
		}
		for i, q := range []string{`"; DROP TABLE expenses; --`, `tesco AND NOT bob*`, strings.Repeat("x", 500), "日本語"} {
			args, _ := json.Marshal(map[string]string{"query": q})
			res := call(t, s, fmt.Sprintf("odd%d", i), contracts.ToolSearch, string(args), false)
			if !res.OK {
				t.Errorf("search %.30q refused: %+v", q, res.Error)
			}
		}
	})
}

// conceptTable is the stand-in embeddings server's whole model: each
// word it knows points along one concept's axis, whatever its language,
// so "payroll" and "Gehalt" come out close while sharing no word. Words
// it does not know spread over the remaining axes by their letters. It
// is deterministic, and stands in for a real model's behaviour only in
// that one respect.
var conceptTable = map[string]int{
	"payroll": 0, "salary": 0, "wage": 0, "gehalt": 0, "lohn": 0, "salaire": 0, "nomina": 0, "stipendio": 0, "loon": 0,
	"groceries": 1, "supermarket": 1, "lebensmittel": 1, "rewe": 1, "edeka": 1,
	"rent": 2, "miete": 2, "loyer": 2, "landlord": 2, "vermieter": 2,
	"fuel": 3, "petrol": 3, "tankstelle": 3, "aral": 3,
}

const standInDims = 16

func standInEmbed(text string) []float32 {
	v := make([]float32, standInDims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		if c, ok := conceptTable[w]; ok {
			v[c] += 3
			continue
		}
		for _, r := range w {
			v[4+int(r)%(standInDims-4)] += 0.1
		}
	}
	return v
}

// embeddingsServer speaks the OpenAI /v1/embeddings wire format with
// standInEmbed; fail makes it answer 500, slow makes it wait past any
// sensible timeout.
type embeddingsServer struct {
	*httptest.Server
	fail, slow atomic.Bool
	calls      atomic.Int64
}

func startEmbeddings(t *testing.T) *embeddingsServer {
	e := &embeddingsServer{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.calls.Add(1)
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		if e.slow.Load() {
			select {
			case <-r.Context().Done():
			case <-time.After(2 * time.Second):
			}
			return
		}
		if e.fail.Load() {
			http.Error(w, `{"error":{"message":"overloaded","type":"server_error"}}`, http.StatusInternalServerError)
			return
		}
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		body, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
			Model  string `json:"model"`
		}{Object: "list", Model: req.Model}
		for i, in := range req.Input {
			out.Data = append(out.Data, item{Object: "embedding", Index: i, Embedding: standInEmbed(in)})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *embeddingsServer) embedder() *toolrunner.OpenAIEmbedder {
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = e.URL + "/v1"
	return toolrunner.NewOpenAIEmbedder(openai.NewClientWithConfig(cfg), "text-embedding-3-small", 0)
}

// seedSalaries gives ann five salary transfers written in German and
// French, and other lines, and indexes them with vectors.
func seedSalaries(t *testing.T, st *store.Store, idx *toolrunner.SearchIndexer) []string {
	t.Helper()
	ctx := context.Background()
	lines := []struct{ desc, vendor string }{
		{"GEHALT NOVEMBER ACME GMBH", "ACME GmbH"}, {"Lohn Oktober", "ACME GmbH"}, {"GEHALT SEPTEMBER", "ACME GmbH"},
		{"SALAIRE AOUT", "Société Durand"}, {"Salaire juillet", "Société Durand"},
		{"REWE Markt 1123", "REWE"}, {"EDEKA Center", "EDEKA"}, {"Miete Dezember", "Hausverwaltung"}, {"ARAL Tankstelle", "ARAL"},
		{"Buchhandlung Hugendubel", "Hugendubel"}, {"Deutsche Bahn Ticket", "DB"}, {"Apotheke am Markt", "Apotheke"},
	}
	var txs []store.Transaction
	for i, l := range lines {
		txs = append(txs, store.Transaction{TenantID: "acme", UserID: "ann", DocumentID: "d1", Date: fmt.Sprintf("2026-%02d-25", 1+i%11),
			AmountMinor: int64(250000 - i), Currency: "EUR", Description: l.desc, Vendor: l.vendor, Category: "other",
			DedupeKey: fmt.Sprint(i), ReviewStatus: store.ReviewOK})
	}
	if _, err := st.InsertTransactions(ctx, txs); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := idx.Round(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	return []string{"GEHALT NOVEMBER ACME GMBH", "Lohn Oktober", "GEHALT SEPTEMBER", "SALAIRE AOUT", "Salaire juillet"}
}

// TestSemanticSearchFindsWordsOfAnotherLanguage is the check:
// "payroll" shares no word with five salary lines in German and French,
// and with the stand-in embeddings server at least four of them are in
// the top five; without it (lexical) none is.
func TestSemanticSearchFindsWordsOfAnotherLanguage(t *testing.T) {
	for _, eng := range storetest.Engines() {
		t.Run(eng.Name, func(t *testing.T) {
			st := storetest.Open(t, eng.DSN(t))
			emb := startEmbeddings(t).embedder()
			m := toolrunner.NewSearchMetrics(prometheus.NewRegistry())
			log := slog.New(slog.DiscardHandler)
			salaries := seedSalaries(t, st, &toolrunner.SearchIndexer{Store: st, Emb: emb, Metrics: m, Log: log})
			q := toolrunner.SearchQuery{TenantID: "acme", UserID: "ann", Text: "payroll", Limit: 5}

			lexical, err := toolrunner.NewSearcher(st, nil, 0, m, log).Search(context.Background(), st, q)
			if err != nil || len(lexical.Results) != 0 {
				t.Fatalf("lexical search = %+v, %v; want nothing (no shared word)", lexical, err)
			}
			got, err := toolrunner.NewSearcher(st, emb, time.Second, m, log).Search(context.Background(), st, q)
			if err != nil {
				t.Fatal(err)
			}
			found := 0
			for _, r := range got.Results {
				for _, s := range salaries {
					if strings.Contains(r.Title+" "+r.Snippet, s) {
						found++
					}
				}
			}
			if got.Mode != contracts.SearchHybrid || found < 4 {
				t.Errorf("hybrid search for payroll: mode %s, %d salary lines in the top 5: %+v", got.Mode, found, got.Results)
			}
		})
	}
}

// TestSearchFallsBackToWords: an embeddings server that fails or does
// not answer in time leaves the words' results, says so, and is counted.
func TestSearchFallsBackToWords(t *testing.T) {
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	srv := startEmbeddings(t)
	emb := srv.embedder()
	reg := prometheus.NewRegistry()
	m := toolrunner.NewSearchMetrics(reg)
	log := slog.New(slog.DiscardHandler)
	seedSalaries(t, st, &toolrunner.SearchIndexer{Store: st, Emb: emb, Metrics: m, Log: log})
	s := toolrunner.NewSearcher(st, emb, 200*time.Millisecond, m, log)
	q := toolrunner.SearchQuery{TenantID: "acme", UserID: "ann", Text: "gehalt"}
	for i, breakIt := range []func(){func() { srv.fail.Store(true) }, func() { srv.fail.Store(false); srv.slow.Store(true) }} {
		breakIt()
		got, err := s.Search(context.Background(), st, q)
		if err != nil {
			t.Fatalf("search with a broken embeddings server: %v", err)
		}
		if got.Mode != contracts.SearchLexical || got.Degraded == "" || len(got.Results) != 2 {
			t.Errorf("round %d: %+v, want the 2 lexical results and why", i, got)
		}
	}
	want := `
# HELP purser_search_semantic_fallbacks_total Searches answered by words only because the embeddings server timed out or failed, and indexer rounds it failed.
# TYPE purser_search_semantic_fallbacks_total counter
purser_search_semantic_fallbacks_total 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "purser_search_semantic_fallbacks_total"); err != nil {
		t.Error(err)
	}
}

// TestSearchIndexerIsIdempotent: indexing again, or after a reindex,
// makes no second vector and asks the server for nothing new.
func TestSearchIndexerIsIdempotent(t *testing.T) {
	st := storetest.Open(t, storetest.SQLiteDSN(t))
	srv := startEmbeddings(t)
	idx := &toolrunner.SearchIndexer{Store: st, Emb: srv.embedder(), Log: slog.New(slog.DiscardHandler)}
	seedSalaries(t, st, idx)
	calls := srv.calls.Load()
	if _, err := st.Reindex(context.Background()); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := idx.Round(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	if got := srv.calls.Load(); got != calls {
		t.Errorf("a reindex of unchanged words asked the embeddings server %d more times", got-calls)
	}
	todo, err := st.Unembedded(context.Background(), idx.Emb.Model(), 100)
	if err != nil || len(todo) != 0 {
		t.Errorf("unembedded after indexing: %d, %v", len(todo), err)
	}
}

// countingIndex is a search index store whose queue always holds n
// changes a round, counting the optimizations asked of it.
type countingIndex struct {
	toolrunner.SearchIndexStore
	n         int
	optimized int
}

func (c *countingIndex) IndexSearch(context.Context, int) (int, error) { return c.n, nil }
func (c *countingIndex) OptimizeSearch(context.Context) error          { c.optimized++; return nil }

// Under a steady flow of messages every round ends a burst; the whole
// index is optimized after the first thousand rows and then at most
// once every ten minutes, not every few rounds.
func TestSearchIndexerOptimizesASteadyFlowRarely(t *testing.T) {
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	st := &countingIndex{n: 400}
	idx := &toolrunner.SearchIndexer{Store: st, Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}
	round := func() {
		t.Helper()
		if _, err := idx.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		round()
	}
	if st.optimized != 1 {
		t.Fatalf("optimized %d times after 1,200 rows, want once", st.optimized)
	}
	for range 599 { // ten minutes less a second, a round a second
		now = now.Add(time.Second)
		round()
	}
	if st.optimized != 1 {
		t.Fatalf("optimized %d times within ten minutes of steady flow, want once", st.optimized)
	}
	now = now.Add(time.Second)
	round()
	if st.optimized != 2 {
		t.Fatalf("optimized %d times after ten minutes, want twice", st.optimized)
	}
}

// scriptedIndex hands each IndexSearch to the test, which says how many
// rows it indexed.
type scriptedIndex struct {
	countingIndex
	calls chan chan int
}

func (s *scriptedIndex) IndexSearch(ctx context.Context, _ int) (int, error) {
	reply := make(chan int)
	select {
	case s.calls <- reply:
		select {
		case n := <-reply:
			return n, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Under a steady flow the indexer takes a round an interval, not one
// after another as rows trickle in: it goes on at once only while rounds
// come full, and otherwise waits (here for its wake-up).
func TestSearchIndexerWaitsAfterARoundThatWasNotFull(t *testing.T) {
	st := &scriptedIndex{calls: make(chan chan int)}
	idx := &toolrunner.SearchIndexer{Store: st, Batch: 100, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	wake, done := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); idx.Run(ctx, time.Hour, wake) }()
	defer func() { cancel(); <-done }()
	for _, n := range []int{100, 100, 7} { // two full rounds, then a part
		(<-st.calls) <- n
	}
	select {
	case <-st.calls:
		t.Fatal("the indexer took another round at once after one of 7 rows in 100")
	case wake <- struct{}{}:
	}
	(<-st.calls) <- 0 // the round the wake-up asked for
}
