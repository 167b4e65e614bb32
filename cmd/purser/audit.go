package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store"
)

// auditCmd prints a tenant's audit log from the store: the operator's
// view, as GET /v1/audit is the tenant owner's.
func auditCmd(cfg *config.Config, stdout io.Writer) *cobra.Command {
	var tenant string
	var limit int
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Print a tenant's latest tool calls (who, tool, outcome, duration, redacted arguments) from DATABASE_URL or the data folder",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > 10000 {
				return fmt.Errorf("--limit: must be from 1 to 10000")
			}
			st, err := store.Open(cmd.Context(), app.DSN(*cfg))
			if err != nil {
				return err
			}
			defer st.Close()
			entries, err := st.ListAudit(cmd.Context(), tenant, limit)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TIME\tUSER\tTOOL\tOUTCOME\tMS\tCALL\tARGS")
			for _, e := range entries {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.CreatedAt.UTC().Format(time.RFC3339), e.UserID, e.Tool, e.Outcome,
					e.DurationMS, e.CallID, e.Args)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "tenant id")
	cmd.Flags().IntVar(&limit, "limit", 50, "how many entries, newest first")
	_ = cmd.MarkFlagRequired("tenant")
	return cmd
}
