package main

import (
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store"
)

func reindexCmd(cfg *config.Config, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "reindex",
		Short: "Rebuild the search index (and its vectors, when PURSER_EMBEDDINGS_URL or OPENAI_API_KEY is set) of DATABASE_URL and exit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := store.Open(cmd.Context(), app.DSN(*cfg))
			if err != nil {
				return err
			}
			defer st.Close()
			return app.Reindex(cmd.Context(), *cfg, st, stdout, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))
		},
	}
}
