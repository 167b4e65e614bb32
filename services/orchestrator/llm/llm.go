// Package llm decides the orchestrator's next step with any model server
// that speaks the OpenAI chat-completions API (OpenAI, Azure OpenAI's v1
// endpoint, vLLM, Ollama, llama.cpp server), through go-openai.
//
// Two protocols: "tools" sends the tool catalog as functions and streams
// the reply, forwarding answer tokens as they arrive; "json" asks for the
// strict JSON decision contract of DESIGN.md with response_format. Replies
// that are not a decision (a cut stream, finish_reason "length", a refusal,
// arguments that are not JSON, a JSON decision of the wrong shape) come
// back as orchestrator.ErrInvalidOutput, which gives the turn its one
// corrective retry: the adapter never asks again on its own for invalid
// content, so an invalid reply costs exactly one more model call. Only
// 429 and 5xx answers are retried here, each logged with its status.
package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	openai "github.com/sashabaranov/go-openai"

	"github.com/purser-ai/purser/internal/tracing"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// Protocols.
const (
	ProtocolTools = "tools"
	ProtocolJSON  = "json"
)

// Config configures a Model.
type Config struct {
	APIKey   string // may be empty for local servers
	BaseURL  string // e.g. https://api.openai.com/v1, http://localhost:11434/v1
	Model    string
	Protocol string // tools (default) or json
	// Timeout bounds one model call, retries included. Default 60 s.
	Timeout time.Duration
	// MaxRetries is how many times a 429 or 5xx is retried. Default 3.
	MaxRetries int
	// Backoff is the first retry's wait when the server gives no
	// Retry-After; it doubles each time, capped at 20 s. Default 500 ms.
	Backoff time.Duration
	// Concurrency is how many calls may be in flight at once (the
	// orchestrator's PURSER_MODEL_CONCURRENCY): the client keeps that many
	// connections to the server open between calls. Default 256
	// (orchestrator.DefaultModelConcurrency).
	Concurrency int
	// HTTPClient, when set, makes the calls; its Transport, when it has
	// one, is used as it is. Without one the client keeps Concurrency
	// idle connections a host, where Go's default keeps two.
	HTTPClient *http.Client
	Registerer prometheus.Registerer // nil: metrics not registered
	// Logger receives one line per retried call and per protocol
	// fallback, with the reason; never the key, the prompt or the reply.
	// nil: discarded.
	Logger *slog.Logger
	// Tracer records a "chat <model>" span for each call, with its token
	// counts. Zero: no spans.
	Tracer tracing.Tracer
}

// Model is an orchestrator.Model over an OpenAI-compatible server.
type Model struct {
	cfg     Config
	client  *openai.Client
	metrics *metrics
	log     *slog.Logger
	// noSchema is set once the server refused response_format json_schema.
	noSchema atomic.Bool
}

var _ orchestrator.Model = (*Model)(nil)

// New checks cfg and builds a Model.
func New(cfg Config) (*Model, error) {
	if cfg.BaseURL == "" && cfg.APIKey == "" {
		return nil, errors.New("model: OPENAI_API_KEY or OPENAI_BASE_URL is required")
	}
	if cfg.Model == "" {
		return nil, errors.New("model: PURSER_MODEL_NAME is required")
	}
	switch cfg.Protocol {
	case "":
		cfg.Protocol = ProtocolTools
	case ProtocolTools, ProtocolJSON:
	default:
		return nil, fmt.Errorf("model: PURSER_MODEL_PROTOCOL must be tools or json, not %q", cfg.Protocol)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	} else if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = orchestrator.DefaultModelConcurrency
	}
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	transport := base.Transport
	if transport == nil {
		transport = pooledTransport(cfg.Concurrency)
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	}
	oc.HTTPClient = &http.Client{Transport: retryAfterTransport{base: catalogTransport{base: transport}}, Timeout: base.Timeout,
		CheckRedirect: base.CheckRedirect, Jar: base.Jar}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Model{cfg: cfg, client: openai.NewClientWithConfig(oc), metrics: newMetrics(cfg.Registerer), log: log}, nil
}

// pooledTransport is Go's default transport keeping up to concurrency
// idle connections to the model server. The default keeps two a host: with
// more calls in flight than that, every call past the second opened a new
// connection and closed it after (a new TLS handshake each time against a
// remote server); in the stub-model bench, dialling and closing was 170
// µs of CPU a turn.
func pooledTransport(concurrency int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = concurrency
	t.MaxIdleConns = max(t.MaxIdleConns, concurrency)
	return t
}

// Protocol is the protocol in use.
func (m *Model) Protocol() string { return m.cfg.Protocol }

func tenantOf(ctx context.Context) string {
	if t := orchestrator.TenantFrom(ctx); t != "" {
		return t
	}
	return "unknown"
}

// usage counts a call's tokens, and logs them with the tenant at debug
// for whoever accounts for use per tenant.
func (m *Model) usage(ctx context.Context, prompt, completion int) {
	m.metrics.usage(prompt, completion)
	tracing.Usage(ctx, "", prompt, completion)
	if m.log != nil && (prompt > 0 || completion > 0) {
		m.log.DebugContext(ctx, "model tokens", "tenant", tenantOf(ctx), "prompt", prompt, "completion", completion)
	}
}

// Decide asks the model for the next step. What the model writes for a
// person (answer tokens, the answer, a clarifying question) may quote mail
// and statements, so it passes contracts.VisibleText: the model's own
// markdown stays, escapes, bidi overrides and invisible characters go.
func (m *Model) Decide(ctx context.Context, p orchestrator.Prompt) (orchestrator.Decision, error) {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	sink := orchestrator.TokenSinkFrom(ctx)
	ctx = orchestrator.WithTokenSink(ctx, func(text string) { sink(contracts.VisibleText(text)) })
	ctx, span := m.cfg.Tracer.Chat(ctx, "openai", m.cfg.Model)
	start := time.Now()
	var d orchestrator.Decision
	var err error
	defer func() {
		errType := ""
		if errors.Is(err, orchestrator.ErrInvalidOutput) {
			errType = "invalid_output"
		}
		tracing.End(span, err, errType)
	}()
	if m.cfg.Protocol == ProtocolJSON {
		d, err = m.decideJSON(ctx, p)
	} else {
		d, err = m.decideTools(ctx, p)
	}
	m.metrics.observe(start, err)
	if err != nil {
		return orchestrator.Decision{}, m.scrub(err)
	}
	d.Content, d.Question = contracts.VisibleText(d.Content), contracts.VisibleText(d.Question)
	return d, nil
}

// invalid marks a reply as not a decision.
func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", orchestrator.ErrInvalidOutput, fmt.Sprintf(format, args...))
}

// scrub keeps the API key out of an error's text whatever the server or
// transport echoed.
func (m *Model) scrub(err error) error {
	if m.cfg.APIKey == "" || !strings.Contains(err.Error(), m.cfg.APIKey) {
		return err
	}
	return &scrubbed{err: err, key: m.cfg.APIKey}
}

type scrubbed struct {
	err error
	key string
}

func (s *scrubbed) Error() string { return strings.ReplaceAll(s.err.Error(), s.key, "[redacted]") }
func (s *scrubbed) Unwrap() error { return s.err }
