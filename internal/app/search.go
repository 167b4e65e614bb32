package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/services/toolrunner"
)

// embedderFor is the embeddings client search uses, nil when none is
// configured (search is then lexical only).
func embedderFor(cfg config.Config) toolrunner.Embedder {
	if !cfg.Embeddings() {
		return nil
	}
	oc := openai.DefaultConfig(cfg.OpenAIKey)
	if cfg.EmbeddingsURL != "" {
		oc.BaseURL = cfg.EmbeddingsURL
	}
	return toolrunner.NewOpenAIEmbedder(openai.NewClientWithConfig(oc), cfg.EmbeddingsModel, cfg.EmbeddingsDimensions)
}

// searcherFor is the one searcher of a service: the tool's and the
// notifier's GET /v1/search rank alike.
func searcherFor(cfg config.Config, st *store.Store, reg prometheus.Registerer, log *slog.Logger) *toolrunner.Searcher {
	return toolrunner.NewSearcher(st, embedderFor(cfg), 2*time.Second, toolrunner.NewSearchMetrics(reg), log)
}

// searchIndexer keeps the search index up to date: every toolrunner runs
// one (they share the queue, each taking different rows).
func searchIndexer(cfg config.Config, st *store.Store, reg prometheus.Registerer, log *slog.Logger) func(context.Context) {
	x := &toolrunner.SearchIndexer{Store: st, Emb: embedderFor(cfg), Metrics: toolrunner.NewSearchMetrics(reg), Log: log}
	return func(ctx context.Context) { x.Run(ctx, time.Second, nil) }
}

// Reindex is "purser reindex": it queues every entry, document and
// message of every person for the search index again and indexes them
// now (vectors too when an embeddings server is configured), reporting
// progress to out. The indexer of a running toolrunner may share the
// work; every step is idempotent.
func Reindex(ctx context.Context, cfg config.Config, st *store.Store, out io.Writer, log *slog.Logger) error {
	queued, err := st.Reindex(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "queued %d records\n", queued)
	x := &toolrunner.SearchIndexer{Store: st, Emb: embedderFor(cfg), Batch: 1000, Log: log}
	start, done := time.Now(), 0
	for {
		n, err := x.Round(ctx)
		if err != nil {
			return fmt.Errorf("reindex: %w", err)
		}
		if n == 0 {
			break
		}
		done += n
	}
	if err := st.OptimizeSearch(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "indexed %d records in %s\n", done, time.Since(start).Round(time.Millisecond))
	return nil
}
