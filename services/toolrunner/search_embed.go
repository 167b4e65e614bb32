package toolrunner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// OpenAIEmbedder asks an OpenAI-compatible /v1/embeddings endpoint for
// vectors (go-openai's CreateEmbeddings).
type OpenAIEmbedder struct {
	client     *openai.Client
	model      string
	dimensions int
}

// NewOpenAIEmbedder embeds with model on the server c points at;
// dimensions 0 takes the model's own.
func NewOpenAIEmbedder(c *openai.Client, model string, dimensions int) *OpenAIEmbedder {
	return &OpenAIEmbedder{client: c, model: model, dimensions: dimensions}
}

// Model names the vectors' model and dimensions: vectors of another
// model, or the same at another size, are never compared with these.
func (e *OpenAIEmbedder) Model() string {
	if e.dimensions > 0 {
		return fmt.Sprintf("%s@%d", e.model, e.dimensions)
	}
	return e.model
}

// Embed returns one vector per text, in order.
func (e *OpenAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := e.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{Input: texts, Model: openai.EmbeddingModel(e.model), Dimensions: e.dimensions})
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(texts) {
			return nil, errors.New("embeddings: an index out of range")
		}
		out[d.Index] = d.Embedding
	}
	for _, v := range out {
		if len(v) == 0 {
			return nil, errors.New("embeddings: a text without its vector")
		}
	}
	return out, nil
}

// SearchIndexStore is what the search indexer writes.
type SearchIndexStore interface {
	IndexSearch(ctx context.Context, limit int) (int, error)
	Unembedded(ctx context.Context, model string, limit int) ([]store.SearchText, error)
	PutEmbeddings(ctx context.Context, model string, texts []store.SearchText, vecs [][]float32) (int, error)
	OptimizeSearch(ctx context.Context) error
}

var _ SearchIndexStore = (*store.Store)(nil)

// SearchIndexer keeps the search index up to date off the write path:
// the database's triggers queue every change to an entry, document or
// message, and the indexer takes the queue in batches, then embeds what
// has no vector of the current model (when it has an Embedder). Every
// step is idempotent, so several indexers (replicas) may run at once and
// a failed batch is simply taken again on the next round.
type SearchIndexer struct {
	Store   SearchIndexStore
	Emb     Embedder // nil: lexical only
	Batch   int      // things per round; 500 when 0
	Metrics *SearchMetrics
	Log     *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// burst counts text rows indexed since the index was last optimized,
	// optimized when.
	burst     int
	optimized time.Time
}

// optimizeAfter is how many rows a burst of indexing writes before the
// index is optimized when the burst ends, at most once every
// optimizeEvery: SQLite's optimize merges the whole index, so its cost
// grows with the index, and under a steady flow of messages (a round
// that takes what a second queued ends a burst) it ran every second or
// two, about 750 rows a second at 1,000 bench users. Between passes
// FTS5's own merging keeps the pieces few.
const (
	optimizeAfter = 1000
	optimizeEvery = 10 * time.Minute
)

// Run indexes a batch, at once again while batches come full, then every
// interval (or at once when wake fires: a tool result or import
// notification says something changed), until ctx ends. Under a steady
// flow a round takes what came in an interval: taken as it came, at
// 1,000 bench users, a round held a few dozen rows and each paid its
// queue read, its mark and its FTS5 segment, 3% of purser's CPU in all
// (docs/performance.md). A person's own search indexes their changes
// first (IndexSearchFor), so no one waits for a round to find what
// they wrote. Failures are logged and retried after a pause that
// doubles up to a minute.
func (x *SearchIndexer) Run(ctx context.Context, interval time.Duration, wake <-chan struct{}) {
	pause := interval
	for {
		n, err := x.Round(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			x.Log.Warn("search indexer", "error", err)
			pause = min(2*pause, time.Minute)
		case n >= x.batch():
			pause = interval
			continue // more is queued
		default:
			pause = interval
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-time.After(pause):
		}
	}
}

// batch is how many things a round takes.
func (x *SearchIndexer) batch() int {
	if x.Batch <= 0 {
		return 500
	}
	return x.Batch
}

// Round indexes one batch of queued changes and embeds one batch of
// things without vectors; it returns how much it did.
func (x *SearchIndexer) Round(ctx context.Context) (int, error) {
	batch := x.batch()
	n, err := x.Store.IndexSearch(ctx, batch)
	if err != nil {
		return 0, err
	}
	x.Metrics.indexed("text", n)
	x.burst += n
	now := time.Now
	if x.Now != nil {
		now = x.Now
	}
	if n < batch && x.burst >= optimizeAfter && (x.optimized.IsZero() || now().Sub(x.optimized) >= optimizeEvery) {
		if err := x.Store.OptimizeSearch(ctx); err != nil {
			return n, err
		}
		x.burst, x.optimized = 0, now()
	}
	if x.Emb == nil {
		return n, nil
	}
	todo, err := x.Store.Unembedded(ctx, x.Emb.Model(), min(batch, 64))
	if err != nil || len(todo) == 0 {
		return n, err
	}
	texts := make([]string, len(todo))
	for i, t := range todo {
		texts[i] = t.Text
	}
	vecs, err := x.Emb.Embed(ctx, texts)
	if err != nil {
		x.Metrics.fallback("indexer: " + err.Error())
		return n, err
	}
	m, err := x.Store.PutEmbeddings(ctx, x.Emb.Model(), todo, vecs)
	x.Metrics.indexed("vector", m)
	return n + len(todo), err
}

// SearchMetrics are the search's series: queries by mode, latency,
// results and top score, fallbacks to lexical, things indexed.
type SearchMetrics struct {
	queries   *prometheus.CounterVec
	latency   prometheus.Histogram
	results   prometheus.Histogram
	top       prometheus.Histogram
	fallbacks prometheus.Counter
	indexedN  *prometheus.CounterVec
}

// NewSearchMetrics registers the series on reg, or takes those already
// registered there (the toolrunner and the notifier of one process share
// them).
func NewSearchMetrics(reg prometheus.Registerer) *SearchMetrics {
	m := &SearchMetrics{
		queries:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_search_queries_total", Help: "Searches, by how they were ranked (lexical or hybrid)."}, []string{"mode"}),
		latency:   prometheus.NewHistogram(prometheus.HistogramOpts{Name: "purser_search_seconds", Help: "Search latency, embedding the query included.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14)}),
		results:   prometheus.NewHistogram(prometheus.HistogramOpts{Name: "purser_search_results", Help: "Results per search.", Buckets: []float64{0, 1, 2, 5, 10, 20, 50}}),
		top:       prometheus.NewHistogram(prometheus.HistogramOpts{Name: "purser_search_top_score", Help: "Score of a search's best result.", Buckets: prometheus.LinearBuckets(0.1, 0.1, 10)}),
		fallbacks: prometheus.NewCounter(prometheus.CounterOpts{Name: "purser_search_semantic_fallbacks_total", Help: "Searches answered by words only because the embeddings server timed out or failed, and indexer rounds it failed."}),
		indexedN:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "purser_search_indexed_total", Help: "Things written to the search index: text rows and vectors."}, []string{"what"}),
	}
	m.queries = register(reg, m.queries)
	m.latency = register(reg, m.latency)
	m.results = register(reg, m.results)
	m.top = register(reg, m.top)
	m.fallbacks = register(reg, m.fallbacks)
	m.indexedN = register(reg, m.indexedN)
	return m
}

// register registers c on reg, or returns the collector already there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if old, ok := are.ExistingCollector.(C); ok {
				return old
			}
		}
		panic(fmt.Sprintf("search metrics: %v", err)) // static names: a clash is a programming error
	}
	return c
}

func (m *SearchMetrics) observe(r contracts.SearchResults, d time.Duration) {
	if m == nil {
		return
	}
	m.queries.WithLabelValues(r.Mode).Inc()
	m.latency.Observe(d.Seconds())
	m.results.Observe(float64(len(r.Results)))
	if len(r.Results) > 0 {
		m.top.Observe(r.Results[0].Score)
	}
}

func (m *SearchMetrics) fallback(string) {
	if m != nil {
		m.fallbacks.Inc()
	}
}

func (m *SearchMetrics) indexed(what string, n int) {
	if m != nil && n > 0 {
		m.indexedN.WithLabelValues(what).Add(float64(n))
	}
}
