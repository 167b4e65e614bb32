package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/oauth2"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func newRoot(getenv func(string) string, stdout, stderr io.Writer) *cobra.Command {
	cfg := config.FromEnv(getenv)
	root := &cobra.Command{
		Use:           "purser",
		Short:         "purser: a conversational finance assistant backend over NATS JetStream",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	cfg.Flags(root.PersistentFlags())
	logger := func() *slog.Logger { return newLogger(cfg, stderr) }

	root.AddCommand(&cobra.Command{
		Use:   "up",
		Short: "Run all four services in one process on an embedded NATS and SQLite",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return app.Up(cmd.Context(), cfg, logger(), func(i app.Info) { app.PrintInfo(stdout, i) })
		},
	})
	for _, mode := range []config.Mode{config.ModeIngress, config.ModeOrchestrator, config.ModeToolrunner, config.ModeNotifier} {
		root.AddCommand(&cobra.Command{
			Use:   string(mode),
			Short: "Run the " + string(mode) + " alone against NATS_URL and DATABASE_URL",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return app.RunService(cmd.Context(), cfg, mode, logger())
			},
		})
	}
	root.AddCommand(tokenCmd(&cfg, stdout), migrateCmd(&cfg, stdout), reindexCmd(&cfg, stdout), chatCmd(&cfg, stdout), mailTokenCmd(&cfg, stdout))
	root.AddCommand(auditCmd(&cfg, stdout))
	root.AddCommand(streamsCmd(&cfg, stdout))
	root.AddCommand(benchCmd(&cfg, stdout, stderr), soakCmd(&cfg, stdout, stderr))
	root.AddCommand(&cobra.Command{
		Use:    app.ImportWorkerCommand,
		Short:  "Parse one statement from stdin under sandbox limits (started by the toolrunner)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return app.ServeImportWorker(os.Stdin, stdout)
		},
	})
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) { fmt.Fprintln(stdout, "purser", version) },
	})
	return root
}

func tokenCmd(cfg *config.Config, stdout io.Writer) *cobra.Command {
	var tenant, user, roles string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Mint a JWT for a tenant and user, signed with PURSER_JWT_SECRET (or the secret 'purser up' generated)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if ttl > auth.DefaultMaxLifetime {
				return fmt.Errorf("--ttl: at most %s; purser refuses longer-lived tokens", auth.DefaultMaxLifetime)
			}
			secret, err := app.Secret(*cfg)
			if err != nil {
				return err
			}
			var rs []auth.Role
			for _, r := range strings.Split(roles, ",") {
				if r = strings.TrimSpace(r); r != "" {
					rs = append(rs, auth.Role(r))
				}
			}
			tok, err := auth.NewMinter(secret, cfg.JWTIssuer, cfg.JWTAudience, time.Now).Mint(tenant, user, rs, ttl)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, tok)
			return nil
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", app.DemoTenant, "tenant id")
	cmd.Flags().StringVar(&user, "user", app.DemoUser, "user id")
	cmd.Flags().StringVar(&roles, "roles", "member", "comma-separated roles: owner, member, viewer")
	cmd.Flags().DurationVar(&ttl, "ttl", time.Hour, "how long the token is valid")
	return cmd
}

func migrateCmd(cfg *config.Config, stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply database migrations to DATABASE_URL (or the SQLite file of 'purser up') and exit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dsn := app.DSN(*cfg)
			st, err := store.Open(cmd.Context(), dsn)
			if err != nil {
				return err
			}
			defer st.Close()
			fmt.Fprintf(stdout, "migrations applied (%s)\n", st.Dialect())
			return nil
		},
	}
}

func mailTokenCmd(cfg *config.Config, stdout io.Writer) *cobra.Command {
	var tenant, user, file string
	cmd := &cobra.Command{
		Use:   "mail-token",
		Short: "Store a user's Gmail OAuth token (JSON from your OAuth flow, scope gmail.readonly), sealed with PURSER_MAIL_TOKEN_KEY",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := cfg.TokenKey()
			if err != nil {
				return fmt.Errorf("PURSER_MAIL_TOKEN_KEY: %w", err)
			}
			raw, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("--token-file: %w", err)
			}
			var tok oauth2.Token
			if err := json.Unmarshal(raw, &tok); err != nil || tok.AccessToken == "" && tok.RefreshToken == "" {
				return errors.New("--token-file: not an OAuth token (want access_token and/or refresh_token)")
			}
			st, err := store.Open(cmd.Context(), app.DSN(*cfg))
			if err != nil {
				return err
			}
			defer st.Close()
			if err := app.PutMailToken(cmd.Context(), st, key, tenant, user, &tok); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Gmail token stored for %s/%s\n", tenant, user)
			return nil
		},
	}
	cmd.Flags().StringVar(&tenant, "tenant", "", "tenant id")
	cmd.Flags().StringVar(&user, "user", "", "user id")
	cmd.Flags().StringVar(&file, "token-file", "", "file holding the token JSON")
	_ = cmd.MarkFlagRequired("tenant")
	_ = cmd.MarkFlagRequired("user")
	_ = cmd.MarkFlagRequired("token-file")
	return cmd
}

func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
