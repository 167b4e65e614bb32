// Package config reads purser's settings from PURSER_* (and a few
// conventional) environment variables, lets flags override them, and checks
// them, naming the setting at fault.
package config

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/prune"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Config is every setting purser reads. See README's configuration table.
type Config struct {
	HTTPAddr string
	// HTTPListener, when set, is a listener its caller opened already
	// (a test that must know the address before purser starts, an
	// embedding program); purser serves on it instead of listening on
	// HTTPAddr, and closes it when it stops. Never from the environment.
	HTTPListener   net.Listener
	MetricsAddr    string
	NATSListen     string
	DataDir        string
	NATSURL        string
	DatabaseURL    string
	Model          string
	OpenAIKey      string
	OpenAIBaseURL  string
	ModelName      string
	ModelProtocol  string
	MailboxDir     string
	Mail           string
	MailTokenKey   string
	GmailEndpoint  string
	JWTSecret      string
	JWKSURL        string
	JWTIssuer      string
	JWTAudience    string
	AllowedOrigins []string
	LogLevel       string
	LogFormat      string
	Tools          []string

	// Google OAuth client for the Gmail connect flow; see GoogleOAuth.
	GoogleClientID     string
	GoogleClientSecret string
	GoogleRedirectURL  string
	GoogleAuthURL      string
	GoogleTokenURL     string
	GoogleRevokeURL    string
	// Stream tunables, used when a stream is created and by `purser
	// streams apply`; see StreamTunables.
	StreamReplicas string
	StreamMaxBytes string
	StreamMaxAge   string
	// NATS credentials of a single service: a user and password, a
	// credentials file (JWT) or an nkey seed file; at most one kind.
	NATSUser     string
	NATSPassword string
	NATSCreds    string
	NATSNKey     string

	// ConsumerConcurrency and ModelConcurrency bound messages handled at
	// once per service and model calls in flight; 0 keeps the defaults,
	// -1 marks a value that is not a positive number.
	ConsumerConcurrency int
	ModelConcurrency    int
	// MaxUploadMiB is the largest file POST /v1/uploads takes, in MiB, and
	// UploadsPerMinute how many one person may send; 0 keeps the
	// defaults (20 and 6), -1 marks a value that is not a positive number.
	MaxUploadMiB     int
	UploadsPerMinute int
	// VisionModel, when set, is a model of the model server that accepts
	// images: the toolrunner has it read receipt photos, with OCR as the
	// fallback. Empty: photos are read by OCR.
	VisionModel string
	// FileRetentionDays, when set, is how long an imported document's file
	// is kept; its record stays. 0 keeps files as long as their documents.
	FileRetentionDays int
	// ProposalTTL is how long a proposal waits for a yes (default 24h);
	// -1 marks a value that is not a duration of a minute or more.
	ProposalTTL time.Duration
	// ShutdownGrace bounds how long a stopping service lets the work it
	// holds finish (default 10s) before it hands the rest back; -1 marks
	// a value that is not a duration of a second or more.
	ShutdownGrace time.Duration
	// EmbeddingsURL is the OpenAI-compatible server search asks for
	// vectors (PURSER_EMBEDDINGS_URL, the model server's OPENAI_BASE_URL
	// by default); search is semantic too when it or OPENAI_API_KEY is
	// set, lexical only otherwise. EmbeddingsModel defaults to
	// text-embedding-3-small; EmbeddingsDimensions 0 is the model's own.
	EmbeddingsURL        string
	EmbeddingsModel      string
	EmbeddingsDimensions int
	// PruneInterval is how often each service prunes the tables it owns
	// (PURSER_PRUNE_INTERVAL, default 5m); OutboxRetention how long a
	// published outbox message is kept (PURSER_OUTBOX_RETENTION, default
	// 10m, at least JetStream's 2-minute duplicate window). -1 marks a
	// value out of bounds.
	PruneInterval   time.Duration
	OutboxRetention time.Duration
	// Retention and TenantRetention are how long documents, messages and
	// the audit log are kept, by default and per tenant
	// (PURSER_RETENTION, PURSER_TENANT_RETENTION); see prune.ParseRetention.
	// Empty keeps everything.
	Retention       string
	TenantRetention string
}

// Embeddings reports whether search has an embeddings server.
func (c Config) Embeddings() bool { return c.EmbeddingsURL != "" || c.OpenAIKey != "" }

// FromEnv reads the environment through getenv (os.Getenv in main).
func FromEnv(getenv func(string) string) Config {
	get := func(key, def string) string {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			return v
		}
		return def
	}
	c := Config{
		HTTPAddr:       get("PURSER_HTTP_ADDR", "127.0.0.1:8080"),
		MetricsAddr:    get("PURSER_METRICS_ADDR", ""),
		NATSListen:     get("PURSER_NATS_LISTEN", "127.0.0.1:4223"),
		DataDir:        get("PURSER_DATA_DIR", "./data"),
		NATSURL:        get("NATS_URL", ""),
		DatabaseURL:    get("DATABASE_URL", ""),
		Model:          get("PURSER_MODEL", ""),
		OpenAIKey:      get("OPENAI_API_KEY", ""),
		OpenAIBaseURL:  get("OPENAI_BASE_URL", ""),
		ModelName:      get("PURSER_MODEL_NAME", "gpt-4o-mini"),
		ModelProtocol:  get("PURSER_MODEL_PROTOCOL", "tools"),
		MailboxDir:     get("PURSER_MAILBOX_DIR", ""),
		Mail:           get("PURSER_MAIL", "local"),
		MailTokenKey:   get("PURSER_MAIL_TOKEN_KEY", ""),
		GmailEndpoint:  get("PURSER_GMAIL_ENDPOINT", ""),
		JWTSecret:      get("PURSER_JWT_SECRET", ""),
		JWKSURL:        get("PURSER_JWKS_URL", ""),
		JWTIssuer:      get("PURSER_JWT_ISSUER", "purser"),
		JWTAudience:    get("PURSER_JWT_AUDIENCE", "purser"),
		AllowedOrigins: list(get("PURSER_ALLOWED_ORIGINS", "")),
		LogLevel:       get("PURSER_LOG_LEVEL", "info"),
		LogFormat:      get("PURSER_LOG_FORMAT", "text"),
		Tools:          list(get("PURSER_TOOLS", "")),

		GoogleClientID:     get("PURSER_GOOGLE_CLIENT_ID", ""),
		GoogleClientSecret: get("PURSER_GOOGLE_CLIENT_SECRET", ""),
		GoogleRedirectURL:  get("PURSER_GOOGLE_REDIRECT_URL", ""),
		GoogleAuthURL:      get("PURSER_GOOGLE_AUTH_URL", "https://accounts.google.com/o/oauth2/auth"),
		GoogleTokenURL:     get("PURSER_GOOGLE_TOKEN_URL", "https://oauth2.googleapis.com/token"),
		GoogleRevokeURL:    get("PURSER_GOOGLE_REVOKE_URL", "https://oauth2.googleapis.com/revoke"),
		StreamReplicas:     get("PURSER_STREAM_REPLICAS", "1"),
		StreamMaxBytes:     get("PURSER_STREAM_MAX_BYTES", ""),
		StreamMaxAge:       get("PURSER_STREAM_MAX_AGE", ""),
		NATSUser:           get("NATS_USER", ""),
		NATSPassword:       get("NATS_PASSWORD", ""),
		NATSCreds:          get("NATS_CREDS", ""),
		NATSNKey:           get("NATS_NKEY", ""),
	}
	c.ConsumerConcurrency = count(get("PURSER_CONSUMER_CONCURRENCY", ""))
	c.ModelConcurrency = count(get("PURSER_MODEL_CONCURRENCY", ""))
	c.MaxUploadMiB = count(get("PURSER_MAX_UPLOAD_MIB", ""))
	c.VisionModel = strings.TrimSpace(get("PURSER_VISION_MODEL", ""))
	c.FileRetentionDays = count(get("PURSER_FILE_RETENTION_DAYS", ""))
	c.UploadsPerMinute = count(get("PURSER_UPLOADS_PER_MINUTE", ""))
	c.ProposalTTL = duration(get("PURSER_PROPOSAL_TTL", "24h"), time.Minute)
	c.ShutdownGrace = duration(get("PURSER_SHUTDOWN_GRACE", "10s"), time.Second)
	c.EmbeddingsURL = strings.TrimSpace(get("PURSER_EMBEDDINGS_URL", c.OpenAIBaseURL))
	c.EmbeddingsModel = strings.TrimSpace(get("PURSER_EMBEDDINGS_MODEL", "text-embedding-3-small"))
	c.EmbeddingsDimensions = count(get("PURSER_EMBEDDINGS_DIMENSIONS", ""))
	c.PruneInterval = duration(get("PURSER_PRUNE_INTERVAL", "5m"), time.Second)
	c.OutboxRetention = duration(get("PURSER_OUTBOX_RETENTION", "10m"), 2*time.Minute)
	c.Retention = get("PURSER_RETENTION", "")
	c.TenantRetention = get("PURSER_TENANT_RETENTION", "")
	return c
}

// duration reads a Go duration ("24h", "90m") of at least least; anything
// else is -1.
func duration(s string, least time.Duration) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil || d < least {
		return -1
	}
	return d
}

// count reads a positive number; "" is 0 (the default), anything else -1.
func count(s string) int {
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return -1
	}
	return n
}

func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Flags registers a flag per setting, defaulting to the current values, so
// a flag overrides the environment. Secrets have no flag: flags show up in
// process listings.
func (c *Config) Flags(fs *pflag.FlagSet) {
	fs.StringVar(&c.HTTPAddr, "http-addr", c.HTTPAddr, "HTTP listen address (PURSER_HTTP_ADDR)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "serve /metrics here instead of on the HTTP address (PURSER_METRICS_ADDR)")
	fs.StringVar(&c.NATSListen, "nats-listen", c.NATSListen, "embedded NATS listen address for 'up' (PURSER_NATS_LISTEN)")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "data folder for 'up' (PURSER_DATA_DIR)")
	fs.StringVar(&c.NATSURL, "nats-url", c.NATSURL, "external NATS for single services (NATS_URL)")
	fs.StringVar(&c.NATSUser, "nats-user", c.NATSUser, "NATS user, with its password in NATS_PASSWORD (NATS_USER)")
	fs.StringVar(&c.NATSCreds, "nats-creds", c.NATSCreds, "NATS credentials file (NATS_CREDS)")
	fs.StringVar(&c.NATSNKey, "nats-nkey", c.NATSNKey, "NATS nkey seed file (NATS_NKEY)")
	fs.StringVar(&c.Model, "model", c.Model, "offline or openai; empty: openai when OPENAI_API_KEY or OPENAI_BASE_URL is set (PURSER_MODEL)")
	fs.StringVar(&c.OpenAIBaseURL, "openai-base-url", c.OpenAIBaseURL, "OpenAI-compatible endpoint (OPENAI_BASE_URL)")
	fs.StringVar(&c.ModelName, "model-name", c.ModelName, "model name (PURSER_MODEL_NAME)")
	fs.StringVar(&c.ModelProtocol, "model-protocol", c.ModelProtocol, "tools or json (PURSER_MODEL_PROTOCOL)")
	fs.DurationVar(&c.PruneInterval, "prune-interval", c.PruneInterval, "how often each service prunes what it keeps only for a while (PURSER_PRUNE_INTERVAL)")
	fs.DurationVar(&c.ProposalTTL, "proposal-ttl", c.ProposalTTL, "how long a proposal waits for a yes (PURSER_PROPOSAL_TTL)")
	fs.DurationVar(&c.ShutdownGrace, "shutdown-grace", c.ShutdownGrace, "how long a stopping service lets held work finish (PURSER_SHUTDOWN_GRACE)")
	fs.StringVar(&c.MailboxDir, "mailbox-dir", c.MailboxDir, "local mailbox of .eml files (PURSER_MAILBOX_DIR)")
	fs.StringVar(&c.Mail, "mail", c.Mail, "local or gmail (PURSER_MAIL)")
	fs.StringVar(&c.GoogleClientID, "google-client-id", c.GoogleClientID, "Google OAuth client id for connecting Gmail (PURSER_GOOGLE_CLIENT_ID)")
	fs.StringVar(&c.GoogleRedirectURL, "google-redirect-url", c.GoogleRedirectURL, "where Google sends the user back: https://<host>/v1/mail/callback (PURSER_GOOGLE_REDIRECT_URL)")
	fs.StringVar(&c.JWKSURL, "jwks-url", c.JWKSURL, "JWKS URL for RS256 tokens (PURSER_JWKS_URL)")
	fs.StringVar(&c.JWTIssuer, "jwt-issuer", c.JWTIssuer, "expected token issuer (PURSER_JWT_ISSUER)")
	fs.StringVar(&c.JWTAudience, "jwt-audience", c.JWTAudience, "expected token audience (PURSER_JWT_AUDIENCE)")
	fs.StringSliceVar(&c.AllowedOrigins, "allowed-origins", c.AllowedOrigins, "browser origins allowed to connect (PURSER_ALLOWED_ORIGINS)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error (PURSER_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "text or json (PURSER_LOG_FORMAT)")
	fs.StringSliceVar(&c.Tools, "tools", c.Tools, "tools this toolrunner serves, all when empty (PURSER_TOOLS)")
	fs.StringVar(&c.StreamReplicas, "stream-replicas", c.StreamReplicas, "replicas of each stream, 1 to 5 (PURSER_STREAM_REPLICAS)")
	fs.StringVar(&c.StreamMaxBytes, "stream-max-bytes", c.StreamMaxBytes, "stream size bounds: 1GiB for every stream, AGENT=2GiB for one, comma-separated (PURSER_STREAM_MAX_BYTES)")
	fs.StringVar(&c.StreamMaxAge, "stream-max-age", c.StreamMaxAge, "stream age bounds: 7d for every stream, NOTIFY=30d for one, comma-separated (PURSER_STREAM_MAX_AGE)")
}

// Mode says what is being started; each needs different settings.
type Mode string

// Modes.
const (
	ModeUp           Mode = "up"
	ModeIngress      Mode = "ingress"
	ModeOrchestrator Mode = "orchestrator"
	ModeToolrunner   Mode = "toolrunner"
	ModeNotifier     Mode = "notifier"
)

// Check validates the settings mode needs. Every problem is reported, each
// naming its setting; no secret value is ever echoed.
func (c Config) Check(mode Mode) error {
	var errs []error
	bad := func(name, problem string) { errs = append(errs, fmt.Errorf("%s: %s", name, problem)) }

	if _, _, err := net.SplitHostPort(c.HTTPAddr); err != nil {
		bad("PURSER_HTTP_ADDR", "must be host:port, such as 127.0.0.1:8080")
	}
	if _, _, err := net.SplitHostPort(c.MetricsAddr); c.MetricsAddr != "" && err != nil {
		bad("PURSER_METRICS_ADDR", "must be host:port, such as 0.0.0.0:9090, or empty to serve /metrics on PURSER_HTTP_ADDR")
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.LogLevel) {
		bad("PURSER_LOG_LEVEL", "must be debug, info, warn or error")
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		bad("PURSER_LOG_FORMAT", "must be text or json")
	}
	if _, err := c.StreamTunables(); err != nil {
		errs = append(errs, err)
	}
	kinds := 0
	for _, set := range []bool{c.NATSUser != "", c.NATSCreds != "", c.NATSNKey != ""} {
		if set {
			kinds++
		}
	}
	if kinds > 1 {
		bad("NATS_USER", "set one of NATS_USER (with NATS_PASSWORD), NATS_CREDS and NATS_NKEY")
	}
	if (c.NATSUser == "") != (c.NATSPassword == "") {
		bad("NATS_PASSWORD", "NATS_USER and NATS_PASSWORD go together")
	}
	if c.ConsumerConcurrency < 0 {
		bad("PURSER_CONSUMER_CONCURRENCY", "must be a positive number")
	}
	if c.ModelConcurrency < 0 {
		bad("PURSER_MODEL_CONCURRENCY", "must be a positive number")
	}
	if c.ProposalTTL < time.Minute {
		bad("PURSER_PROPOSAL_TTL", "must be a duration of a minute or more, such as 24h or 90m")
	}
	if c.ShutdownGrace < time.Second {
		bad("PURSER_SHUTDOWN_GRACE", "must be a duration of a second or more, such as 10s")
	}
	if c.MaxUploadMiB < 0 || c.MaxUploadMiB > 64 {
		bad("PURSER_MAX_UPLOAD_MIB", "must be a number of MiB from 1 to 64")
	}
	if c.VisionModel != "" && c.OpenAIKey == "" && c.OpenAIBaseURL == "" {
		bad("PURSER_VISION_MODEL", "needs a model server: set OPENAI_API_KEY or OPENAI_BASE_URL")
	}
	if c.EmbeddingsURL != "" {
		if u, err := url.Parse(c.EmbeddingsURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("PURSER_EMBEDDINGS_URL", "must be an http(s) URL")
		}
	}
	if c.EmbeddingsDimensions < 0 || c.EmbeddingsDimensions > 8192 {
		bad("PURSER_EMBEDDINGS_DIMENSIONS", "must be a number from 1 to 8192")
	}
	if c.FileRetentionDays < 0 {
		bad("PURSER_FILE_RETENTION_DAYS", "must be a positive number of days")
	}
	if c.UploadsPerMinute < 0 {
		bad("PURSER_UPLOADS_PER_MINUTE", "must be a positive number")
	}
	if c.PruneInterval < time.Second {
		bad("PURSER_PRUNE_INTERVAL", "must be a duration of a second or more, such as 5m")
	}
	if c.OutboxRetention < 2*time.Minute {
		bad("PURSER_OUTBOX_RETENTION", "must be a duration of 2m (JetStream's duplicate window) or more, such as 10m")
	}
	if _, err := c.RetentionPolicy(); err != nil {
		errs = append(errs, err)
	}
	if mode == ModeUp {
		host, port, err := net.SplitHostPort(c.NATSListen)
		if p, perr := strconv.Atoi(port); err != nil || perr != nil || p < 0 || p > 65535 || host == "" {
			bad("PURSER_NATS_LISTEN", "must be host:port, such as 127.0.0.1:4223")
		}
		if strings.TrimSpace(c.DataDir) == "" {
			bad("PURSER_DATA_DIR", "must name a folder")
		}
	} else {
		if c.NATSURL == "" {
			bad("NATS_URL", "is required to run a single service (for example nats://nats:4222)")
		} else if u, err := url.Parse(c.NATSURL); err != nil || (u.Scheme != "nats" && u.Scheme != "tls") {
			bad("NATS_URL", "must be a nats:// or tls:// URL")
		}
		if mode != ModeIngress {
			if c.DatabaseURL == "" {
				bad("DATABASE_URL", "is required to run a single service (a postgres:// URL)")
			} else if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") && !strings.HasPrefix(c.DatabaseURL, "sqlite:") {
				bad("DATABASE_URL", "must be a postgres:// URL (or sqlite:<path> for one process)")
			}
		}
	}
	if mode == ModeUp || mode == ModeIngress {
		if c.JWKSURL != "" && c.JWTSecret != "" {
			bad("PURSER_JWKS_URL", "set either PURSER_JWT_SECRET or PURSER_JWKS_URL, not both")
		}
		if c.JWKSURL != "" {
			if u, err := url.Parse(c.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
				bad("PURSER_JWKS_URL", "must be an http(s) URL")
			}
		}
		if mode == ModeIngress && c.JWKSURL == "" && c.JWTSecret == "" {
			bad("PURSER_JWT_SECRET", "is required (or PURSER_JWKS_URL) to run the ingress")
		}
		if c.JWTSecret != "" && len(c.JWTSecret) < 32 {
			bad("PURSER_JWT_SECRET", "must be at least 32 characters")
		}
		if c.JWTIssuer == "" {
			bad("PURSER_JWT_ISSUER", "must not be empty")
		}
		if c.JWTAudience == "" {
			bad("PURSER_JWT_AUDIENCE", "must not be empty")
		}
	}
	if mode == ModeUp || mode == ModeOrchestrator {
		switch c.Model {
		case "offline":
		case "", "openai":
			if c.Model == "openai" && c.OpenAIKey == "" && c.OpenAIBaseURL == "" {
				bad("OPENAI_API_KEY", "is required with PURSER_MODEL=openai (or set OPENAI_BASE_URL for a local server)")
			}
			if c.OpenAIBaseURL != "" {
				if u, err := url.Parse(c.OpenAIBaseURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
					bad("OPENAI_BASE_URL", "must be an http(s) URL")
				}
			}
		default:
			bad("PURSER_MODEL", "must be offline or openai")
		}
		if c.ModelName == "" && c.UsesModelServer() {
			bad("PURSER_MODEL_NAME", "must not be empty")
		}
		if c.ModelProtocol != "tools" && c.ModelProtocol != "json" {
			bad("PURSER_MODEL_PROTOCOL", "must be tools or json")
		}
	}
	if mode == ModeUp || mode == ModeToolrunner {
		switch c.Mail {
		case "local":
		case "gmail":
			if _, err := c.TokenKey(); err != nil {
				bad("PURSER_MAIL_TOKEN_KEY", err.Error())
			}
			c.checkGoogle(bad)
		default:
			bad("PURSER_MAIL", "must be local or gmail")
		}
		for _, t := range c.Tools {
			if spec, ok := contracts.LookupTool(t); !ok || spec.Name == contracts.ToolAskClarification {
				bad("PURSER_TOOLS", fmt.Sprintf("unknown tool %q", t))
			}
		}
	}
	return errors.Join(errs...)
}

// MailboxPath is the local mailbox folder: the setting, or <data>/mailbox.
func (c Config) MailboxPath() string {
	if c.MailboxDir != "" {
		return c.MailboxDir
	}
	return filepath.Join(c.DataDir, "mailbox")
}

// UsesModelServer reports whether the orchestrator asks a model server
// (PURSER_MODEL=openai, or unset with a key or URL) rather than the
// offline model.
func (c Config) UsesModelServer() bool {
	return c.Model == "openai" || (c.Model == "" && (c.OpenAIKey != "" || c.OpenAIBaseURL != ""))
}

// TokenKey is the 32-byte key that seals users' mail tokens, given as 64
// hex characters in PURSER_MAIL_TOKEN_KEY.
func (c Config) TokenKey() ([]byte, error) {
	k, err := hex.DecodeString(c.MailTokenKey)
	if err != nil || len(k) != 32 {
		return nil, errors.New("must be 64 hex characters (32 bytes) when PURSER_MAIL=gmail")
	}
	return k, nil
}

// GoogleOAuth reports whether a Google OAuth client is configured: users
// can then connect Gmail from the web page or over HTTP, and their tokens
// are refreshed. Without one, tokens stored by 'purser mail-token' are
// used as they are.
func (c Config) GoogleOAuth() bool { return c.GoogleClientID != "" }

// checkGoogle checks the Google OAuth client settings: all or none of id,
// secret and redirect URL, and http(s) endpoints.
func (c Config) checkGoogle(bad func(name, problem string)) {
	if c.GoogleClientID == "" && c.GoogleClientSecret == "" && c.GoogleRedirectURL == "" {
		return
	}
	if c.GoogleClientID == "" {
		bad("PURSER_GOOGLE_CLIENT_ID", "is required with PURSER_GOOGLE_CLIENT_SECRET or PURSER_GOOGLE_REDIRECT_URL")
	}
	if c.GoogleClientSecret == "" {
		bad("PURSER_GOOGLE_CLIENT_SECRET", "is required with PURSER_GOOGLE_CLIENT_ID")
	}
	if c.GoogleRedirectURL == "" {
		bad("PURSER_GOOGLE_REDIRECT_URL", "is required with PURSER_GOOGLE_CLIENT_ID (https://<your host>/v1/mail/callback)")
	}
	for _, u := range []struct{ name, value string }{
		{"PURSER_GOOGLE_REDIRECT_URL", c.GoogleRedirectURL},
		{"PURSER_GOOGLE_AUTH_URL", c.GoogleAuthURL},
		{"PURSER_GOOGLE_TOKEN_URL", c.GoogleTokenURL},
		{"PURSER_GOOGLE_REVOKE_URL", c.GoogleRevokeURL},
	} {
		if u.value == "" {
			continue
		}
		if p, err := url.Parse(u.value); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			bad(u.name, "must be an http(s) URL")
		}
	}
}

// RetentionPolicy reads PURSER_RETENTION and PURSER_TENANT_RETENTION.
func (c Config) RetentionPolicy() (prune.Retention, error) {
	return prune.ParseRetention(c.Retention, c.TenantRetention)
}

// StreamTunables reads PURSER_STREAM_REPLICAS, PURSER_STREAM_MAX_BYTES and
// PURSER_STREAM_MAX_AGE. A bound is a list of entries separated by
// commas, each either a value for every stream ("1GiB") or one stream's
// ("AGENT=2GiB"); a stream named by neither keeps its default.
func (c Config) StreamTunables() (bus.StreamTunables, error) {
	var errs []error
	t := bus.StreamTunables{MaxBytes: map[string]int64{}, MaxAge: map[string]time.Duration{}}
	n, err := strconv.Atoi(c.StreamReplicas)
	if err != nil || n < 1 || n > 5 {
		errs = append(errs, errors.New("PURSER_STREAM_REPLICAS: must be a number from 1 to 5"))
	}
	t.Replicas = n
	if err := perStream(c.StreamMaxBytes, bus.ParseBytes, t.MaxBytes); err != nil {
		errs = append(errs, fmt.Errorf("PURSER_STREAM_MAX_BYTES: %w", err))
	}
	if err := perStream(c.StreamMaxAge, bus.ParseAge, t.MaxAge); err != nil {
		errs = append(errs, fmt.Errorf("PURSER_STREAM_MAX_AGE: %w", err))
	}
	return t, errors.Join(errs...)
}

func perStream[T any](s string, parse func(string) (T, error), into map[string]T) error {
	for _, entry := range list(s) {
		name, value, named := strings.Cut(entry, "=")
		if !named {
			name, value = "", entry
		} else if name = strings.ToUpper(strings.TrimSpace(name)); !slices.Contains(bus.StreamNames(), name) {
			return fmt.Errorf("unknown stream %q (streams: %s)", name, strings.Join(bus.StreamNames(), ", "))
		}
		if _, dup := into[name]; dup {
			return fmt.Errorf("%q is given twice", entry)
		}
		v, err := parse(value)
		if err != nil {
			return err
		}
		into[name] = v
	}
	return nil
}
