package app

import (
	"encoding/json"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
)

type testSearch struct {
	Results []contracts.SearchResult `json:"results"`
	Mode    string                   `json:"mode"`
}

// searchUntil asks GET /v1/search as token until the results pass ok
// (the indexer works off the write path), failing after a deadline.
func searchUntil(t *testing.T, info Info, token, q string, ok func(testSearch) bool) testSearch {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var got testSearch
		status, body := getLedger(t, info, token, "/v1/search?q="+url.QueryEscape(q)+"&limit=50", &got)
		if status != http.StatusOK {
			t.Fatalf("GET /v1/search?q=%.30q = %d %s", q, status, body)
		}
		if ok(got) || time.Now().After(deadline) {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// standInEmbeddings answers /v1/embeddings with a vector of each text's
// words (one axis per word, by hash): enough for the wiring to run
// semantic search, and to keep a scripted model server from being asked
// for vectors.
func standInEmbeddings(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
		}{Object: "list"}
		for i, in := range req.Input {
			v := make([]float32, 4096)
			for _, w := range strings.Fields(strings.ToLower(in)) {
				h := fnv.New32a()
				h.Write([]byte(w))
				v[h.Sum32()%4096]++
			}
			out.Data = append(out.Data, item{Index: i, Embedding: v})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestSearchEndToEnd checks the "done when" on a statement
// imported through the mail flow: the search finds every line of a
// merchant, the records it names open for their owner only, odd queries
// answer, and an answer built on a search cites each transaction once,
// on the socket and in POST /v1/chat.
func TestSearchEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var tesco []string
	t.Run("imported statement is found", func(t *testing.T) {
		info := startUp(t, func(c *config.Config) { c.DataDir = dir })
		c := dial(t, info, info.DemoToken)
		c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"Find my last Visa statement and process it"}`)
		p := c.next(contracts.FrameProposal)
		c.send(`{"type":"confirm","id":"m2","conversation_id":"c1","proposal_id":"` + p.Proposal.ProposalID + `","decision":"approve"}`)
		c.nextEach(contracts.FrameAnswer, contracts.FrameNotification)

		var ledger testLedger
		if status, body := getLedger(t, info, info.DemoToken, "/v1/ledger?q=tesco&from=2000-01-01&to=2100-12-31&limit=200", &ledger); status != http.StatusOK || len(ledger.Entries) == 0 {
			t.Fatalf("ledger of tesco: %d %s", status, body)
		}
		for _, e := range ledger.Entries {
			tesco = append(tesco, e.ID)
		}
		found := searchUntil(t, info, info.DemoToken, "Tesco", func(s testSearch) bool { return len(s.Results) >= len(tesco) })
		var ids []string
		for _, r := range found.Results {
			ids = append(ids, r.ID)
		}
		for _, id := range tesco {
			if !slices.Contains(ids, id) {
				t.Errorf("search for Tesco = %v, missing ledger line %s", ids, id)
			}
		}
		// "AMAZON MARKETPLACE" is found by the bank's abbreviation too.
		if got := searchUntil(t, info, info.DemoToken, "amzn", func(s testSearch) bool { return len(s.Results) > 0 }); len(got.Results) == 0 ||
			!strings.Contains(got.Results[0].Title, "AMAZON") {
			t.Errorf("search for amzn = %+v", got.Results)
		}

		// The records a result names open for their owner, and for
		// nobody else.
		bob := mint(t, info, DemoTenant, "bob", auth.RoleMember)
		first := found.Results[0]
		var entry contracts.LedgerEntry
		if status, body := getLedger(t, info, info.DemoToken, first.URL, &entry); status != http.StatusOK || !strings.Contains(entry.Description, "TESCO") || entry.Source == "" {
			t.Fatalf("GET %s = %d %s", first.URL, status, body)
		}
		var doc contracts.DocumentView
		if status, body := getLedger(t, info, info.DemoToken, "/v1/documents/"+entry.Source, &doc); status != http.StatusOK || len(doc.Entries) == 0 || !doc.FileKept {
			t.Fatalf("GET the source document = %d %s", status, body)
		}
		if status, body := getLedger(t, info, info.DemoToken, "/v1/documents/"+entry.Source+"?download=1", nil); status != http.StatusOK || !strings.Contains(body, "TESCO") {
			t.Errorf("download = %d %.80s", status, body)
		}
		for _, path := range []string{first.URL, "/v1/documents/" + entry.Source, "/v1/documents/" + entry.Source + "?download=1", "/v1/ledger/entries/expense-1"} {
			if status, _ := getLedger(t, info, bob, path, nil); status != http.StatusNotFound {
				t.Errorf("bob GET %s = %d, want 404", path, status)
			}
		}
		if got := searchUntil(t, info, bob, "tesco", func(testSearch) bool { return true }); len(got.Results) != 0 {
			t.Errorf("bob's search found %+v", got.Results)
		}
		// Any query answers, with results or none.
		for _, q := range []string{"", `"; DROP TABLE transactions; --`, `tesco" OR 1=1`, "NEAR(a b) AND *", strings.Repeat("tesco ", 1700), "日本語", "العربية"} {
			searchUntil(t, info, info.DemoToken, q, func(testSearch) bool { return true })
		}
		for _, bad := range []string{"/v1/search?q=x&limit=0", "/v1/search?q=x&kind=tool", "/v1/search?q=x&user=bob"} {
			if status, _ := getLedger(t, info, info.DemoToken, bad, nil); status != http.StatusBadRequest {
				t.Errorf("GET %s = %d, want 400", bad, status)
			}
		}
	})
	if len(tesco) == 0 {
		t.FailNow()
	}
	t.Run("answers cite the records", func(t *testing.T) {
		srv := llmtest.New(t)
		info := startUp(t, func(c *config.Config) {
			c.DataDir = dir
			c.OpenAIBaseURL, c.OpenAIKey, c.ModelName = srv.URL, "sk-test-0123456789-never-logged", "local-model"
			c.EmbeddingsURL = standInEmbeddings(t)
		})
		script := func() {
			srv.Push(llmtest.ToolCalls(llmtest.Call{ID: "call1", Name: contracts.ToolSearch, Args: []string{`{"query":"Tesco",`, `"only":"entry"}`}}),
				llmtest.Text("Here are your payments to Tesco."))
		}
		cited := func(cs []contracts.Citation) {
			t.Helper()
			var ids []string
			for _, c := range cs {
				if c.Kind != contracts.SearchKindEntry || c.URL != "/v1/ledger/entries/"+c.ID || c.Title == "" {
					t.Errorf("citation %+v is not an entry one can open", c)
				}
				ids = append(ids, c.ID)
			}
			slices.Sort(ids)
			want := slices.Clone(tesco)
			slices.Sort(want)
			if !slices.Equal(ids, want) {
				t.Errorf("citations name %v, want each Tesco line once: %v", ids, want)
			}
		}
		script()
		c := dial(t, info, info.DemoToken)
		c.send(`{"type":"message","id":"m1","conversation_id":"c2","text":"find my payments to Tesco"}`)
		ans := c.next(contracts.FrameAnswer)
		cited(ans.Answer.Citations)

		script()
		req, _ := http.NewRequest(http.MethodPost, "http://"+info.HTTPAddr+"/v1/chat", strings.NewReader(`{"history":[],"message":"find my payments to Tesco"}`))
		req.Header.Set("Authorization", "Bearer "+info.DemoToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var chat struct {
			Answer    string               `json:"answer"`
			Citations []contracts.Citation `json:"citations"`
		}
		if err := json.Unmarshal(b, &chat); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /v1/chat = %d %s", resp.StatusCode, b)
		}
		cited(chat.Citations)
	})
}
