package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/config"
)

func streamsCmd(cfg *config.Config, stdout io.Writer) *cobra.Command {
	streams := &cobra.Command{
		Use:   "streams",
		Short: "Inspect and change the JetStream streams",
	}
	var dryRun bool
	apply := &cobra.Command{
		Use:   "apply",
		Short: "Print how each stream differs from purser's definitions and PURSER_STREAM_* settings, then change it",
		Long: `apply compares every stream on NATS_URL (or on the NATS server of a
running 'purser up') with the settings purser depends on (subjects,
retention, storage) and the configured tunables (PURSER_STREAM_REPLICAS,
PURSER_STREAM_MAX_BYTES, PURSER_STREAM_MAX_AGE), prints each difference,
and then creates or updates the streams. Services never change an existing
stream: this is the only way purser does.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return app.StreamsApply(cmd.Context(), *cfg, stdout, dryRun)
		},
	}
	apply.Flags().BoolVar(&dryRun, "dry-run", false, "print the differences and change nothing")
	streams.AddCommand(apply)
	return streams
}
