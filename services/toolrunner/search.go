package toolrunner

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/wording"
	"github.com/purser-ai/purser/pkg/contracts"
)

// SearchStore is what a search reads: the lexical and vector indexes,
// and the person's changes not indexed yet.
type SearchStore interface {
	SearchLexical(ctx context.Context, f store.SearchFilter) ([]store.SearchHit, error)
	SearchVectors(ctx context.Context, f store.SearchFilter, model string, vec []float32, minSimilarity float64) ([]store.SearchHit, error)
	SearchQueued(ctx context.Context, tenantID, userID string) (bool, error)
	IndexSearchFor(ctx context.Context, tenantID, userID string, limit int) (int, error)
	TurnFrameSeqs(ctx context.Context, tenantID, userID, turnID string) ([]int64, error)
}

var _ SearchStore = (*store.Store)(nil)

// Embedder turns texts into vectors, one per text, all of one model.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Model() string
}

// SearchQuery is one person's search.
type SearchQuery struct {
	TenantID, UserID string
	Text             string
	Kind             string // empty for every kind
	From, To         string
	Limit            int
	// ExceptTurn leaves out the messages of this turn: the question a
	// search answers is not one of its results.
	ExceptTurn string
}

// Searcher answers searches: lexical always, fused by reciprocal rank
// with the nearest vectors when it has an Embedder. Create it with
// NewSearcher; the zero value is not usable.
type Searcher struct {
	store   SearchStore // nil: the tool's transaction is the store
	emb     Embedder    // nil: lexical only
	timeout time.Duration
	metrics *SearchMetrics
	log     *slog.Logger
}

// NewSearcher searches st, with emb (nil for lexical only) given at most
// timeout for a query's vector.
func NewSearcher(st SearchStore, emb Embedder, timeout time.Duration, m *SearchMetrics, log *slog.Logger) *Searcher {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	return &Searcher{store: st, emb: emb, timeout: timeout, metrics: m, log: log}
}

// rrfK is reciprocal rank fusion's constant: a result's score from one
// ranking is 1/(rrfK + rank). 60 is the value of the method's paper;
// it lets a result that ranks well in both lists beat one first in one.
const rrfK = 60

// MinSimilarity is the least cosine similarity a record needs to be
// found by meaning alone: nearest neighbours always exist, and without a
// floor every search would cite unrelated records. 0.3 keeps what
// text-embedding-3-small rates related and drops the unrelated, whose
// similarity to a short query is mostly below 0.2.
const MinSimilarity = 0.3

// indexBeforeSearch bounds the person's queued changes a search indexes
// before it reads; more wait for the indexer.
const indexBeforeSearch = 500

// Search returns the person's records for q, best first. When the
// embeddings server fails or times out, the results are lexical and
// Degraded says so (and the fallback is counted); that is never an error.
func (s *Searcher) Search(ctx context.Context, st SearchStore, q SearchQuery) (contracts.SearchResults, error) {
	start := time.Now()
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, contracts.MaxSearchLimit)
	// What the person just wrote is found: their queued changes first.
	if queued, err := st.SearchQueued(ctx, q.TenantID, q.UserID); err != nil {
		return contracts.SearchResults{}, err
	} else if queued {
		if _, err := st.IndexSearchFor(ctx, q.TenantID, q.UserID, indexBeforeSearch); err != nil {
			// The indexer will take them; searching what is indexed
			// still answers.
			s.log.Warn("search: index before search", "error", err)
		}
	}
	f := store.SearchFilter{TenantID: q.TenantID, UserID: q.UserID, Query: q.Text, From: q.From, To: q.To, Limit: 2 * limit}
	if q.Kind != "" {
		f.Kinds = []string{q.Kind}
	}
	lexical, err := st.SearchLexical(ctx, f)
	if err != nil {
		return contracts.SearchResults{}, err
	}
	out := contracts.SearchResults{Mode: contracts.SearchLexical}
	lists := [][]store.SearchHit{lexical}
	if s.emb != nil && strings.TrimSpace(q.Text) != "" {
		semantic, reason := s.semantic(ctx, st, f, q.Text)
		if reason != "" {
			out.Degraded = reason
			s.metrics.fallback(reason)
		} else {
			out.Mode = contracts.SearchHybrid
			lists = append(lists, semantic)
		}
	}
	if q.ExceptTurn != "" {
		seqs, err := st.TurnFrameSeqs(ctx, q.TenantID, q.UserID, q.ExceptTurn)
		if err != nil {
			return contracts.SearchResults{}, err
		}
		for i := range lists {
			lists[i] = withoutMessages(lists[i], seqs)
		}
	}
	out.Results = fuse(lists, limit)
	s.metrics.observe(out, time.Since(start))
	s.log.Info("search", "user", q.UserID, "mode", out.Mode, "results", len(out.Results), "top_score", topScore(out.Results),
		"ms", time.Since(start).Milliseconds())
	s.log.Debug("search query", "user", q.UserID, "query", q.Text)
	return out, nil
}

// semantic is the nearest vectors to the query's, or why there are none.
func (s *Searcher) semantic(ctx context.Context, st SearchStore, f store.SearchFilter, text string) ([]store.SearchHit, string) {
	ectx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	vecs, err := s.emb.Embed(ectx, []string{text})
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ectx.Err() != nil:
		return nil, "the embeddings server did not answer in time; results are by words only"
	case err != nil || len(vecs) != 1:
		s.log.Warn("search: embed query", "error", err)
		return nil, "the embeddings server failed; results are by words only"
	}
	hits, err := st.SearchVectors(ctx, f, s.emb.Model(), vecs[0], MinSimilarity)
	if err != nil {
		s.log.Warn("search: vectors", "error", err)
		return nil, "the vector index failed; results are by words only"
	}
	return hits, ""
}

// withoutMessages is hits without the messages whose seq is in seqs.
func withoutMessages(hits []store.SearchHit, seqs []int64) []store.SearchHit {
	if len(seqs) == 0 {
		return hits
	}
	return slices.DeleteFunc(slices.Clone(hits), func(h store.SearchHit) bool {
		if h.Kind != store.SearchMessage {
			return false
		}
		seq, err := strconv.ParseInt(h.Ref, 10, 64)
		return err == nil && slices.Contains(seqs, seq)
	})
}

// fuse merges ranked lists by reciprocal rank: each list gives a record
// 1/(rrfK+rank); scores add up, scaled so that first in every list is 1.
// A record is listed once.
func fuse(lists [][]store.SearchHit, limit int) []contracts.SearchResult {
	type acc struct {
		hit   store.SearchHit
		score float64
		first int // the best position it had, for ties
	}
	byKey := map[string]*acc{}
	var order []*acc
	for _, list := range lists {
		for i, h := range list {
			key := h.Kind + ":" + h.Ref
			a, ok := byKey[key]
			if !ok {
				a = &acc{hit: h, first: i}
				byKey[key] = a
				order = append(order, a)
			}
			a.score += 1 / float64(rrfK+i+1)
			a.first = min(a.first, i)
		}
	}
	slices.SortStableFunc(order, func(a, b *acc) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(a.first, b.first)
	})
	best := float64(len(lists)) / float64(rrfK+1)
	out := make([]contracts.SearchResult, 0, min(limit, len(order)))
	for _, a := range order[:min(limit, len(order))] {
		out = append(out, searchResult(a.hit, min(1, a.score/best)))
	}
	return out
}

// searchResult is a hit as the person sees it: its text neutralised, and
// the address of the record (their own only: every route checks).
func searchResult(h store.SearchHit, score float64) contracts.SearchResult {
	r := contracts.SearchResult{Kind: h.Kind, ID: h.Ref, Title: wording.CutBytes(contracts.PlainText(h.Title), 300),
		Snippet: wording.CutBytes(contracts.PlainText(h.Snippet), 600), Date: h.Date, Score: math4(score)}
	if h.AmountMinor != nil {
		r.Amount = &contracts.Money{Minor: *h.AmountMinor, Currency: h.Currency}
	}
	switch h.Kind {
	case store.SearchEntry:
		r.URL = "/v1/ledger/entries/" + url.PathEscape(h.Ref)
	case store.SearchDocument:
		r.URL = "/v1/documents/" + url.PathEscape(h.Ref)
	case store.SearchMessage:
		r.Conversation = h.Parent
		// The page of the conversation that ends with the message.
		if seq, err := strconv.ParseInt(h.Ref, 10, 64); err == nil {
			r.URL = "/v1/conversations/" + url.PathEscape(h.Parent) + "/frames?before_seq=" + strconv.FormatInt(seq+1, 10)
		}
	}
	return r
}

// math4 rounds a score to 4 decimals, so results read and compare alike.
func math4(x float64) float64 { return float64(int64(x*10000+0.5)) / 10000 }

func topScore(rs []contracts.SearchResult) float64 {
	if len(rs) == 0 {
		return 0
	}
	return rs[0].Score
}

// Tool is the search tool over s. With no store of its own, it searches
// the store the runner gives it.
func (s *Searcher) Tool() Tool {
	return Tool{Name: contracts.ToolSearch, Kind: contracts.KindRead, Deadline: 5 * time.Second, OutputCap: 64 << 10, PerMinute: 60,
		Run: func(ctx context.Context, tx Tx, c Call) (Output, error) {
			a := c.Args.(*contracts.SearchArgs)
			st := s.store
			if st == nil {
				var ok bool
				if st, ok = tx.(SearchStore); !ok {
					return Output{}, fail(contracts.CodeInternal, "Search is not available here.")
				}
			}
			q := SearchQuery{TenantID: c.Caller.TenantID, UserID: c.Caller.UserID, Text: a.Query, ExceptTurn: c.Caller.TurnID}
			if a.Only != nil {
				q.Kind = *a.Only
			}
			if a.From != nil {
				q.From = *a.From
			}
			if a.To != nil {
				q.To = *a.To
			}
			if a.Limit != nil {
				q.Limit = *a.Limit
			}
			res, err := s.Search(ctx, st, q)
			if err != nil {
				return Output{}, err
			}
			total := int64(len(res.Results))
			return Output{Data: res, Total: &total, Warning: res.Degraded}, nil
		}}
}

// SearchFor answers GET /v1/search for a person from the Searcher's own
// store: the same ranking as the tool.
func (s *Searcher) SearchFor(ctx context.Context, tenant, user string, req contracts.SearchRequest) (contracts.SearchResults, error) {
	return s.Search(ctx, s.store, SearchQuery{TenantID: tenant, UserID: user, Text: req.Query, Kind: req.Kind, Limit: req.Limit})
}
