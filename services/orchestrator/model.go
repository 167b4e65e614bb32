package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// DecisionKind is what the model chose to do.
type DecisionKind string

// Decision kinds: exactly one per model response.
const (
	DecisionAnswer    DecisionKind = "answer"
	DecisionClarify   DecisionKind = "clarify"
	DecisionToolCalls DecisionKind = "tool_calls"
	DecisionPlan      DecisionKind = "plan"
)

// Decision is the model's choice for one step of a turn.
type Decision struct {
	Kind     DecisionKind `json:"kind"`
	Content  string       `json:"content,omitempty"`
	Question string       `json:"question,omitempty"`
	Calls    []Call       `json:"calls,omitempty"`
	Plan     *Plan        `json:"plan,omitempty"`
}

// Call is one tool call the model asked for, before validation.
type Call struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args"`
}

// Plan is a sequence of steps whose args may reference working memory with
// {"$var": "ids.project_id"}, run in order until StopWhen holds.
type Plan struct {
	Steps    []PlanStep     `json:"steps"`
	StopWhen *StopCondition `json:"stop_when,omitempty"`
}

// PlanStep is one step of a plan. SaveAs names where its result goes in
// working memory (e.g. "lists.messages").
type PlanStep struct {
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	SaveAs string          `json:"save_as,omitempty"`
}

// StopCondition ends a plan early: when the value at Var is empty (a list
// with no items, a missing key) or, with NotEmpty, when it has something.
type StopCondition struct {
	Var      string `json:"var"`
	Empty    bool   `json:"empty,omitempty"`
	NotEmpty bool   `json:"not_empty,omitempty"`
}

// Prompt is everything the model is asked with for one step.
type Prompt struct {
	TurnID string
	Text   string // the latest user text of this turn
	// Upload is the file the person sent with Text, if any; Text ends
	// with a note naming it.
	Upload   *contracts.Upload
	Now      time.Time // in the user's time zone
	Timezone string
	// Currency is the ISO 4217 code an amount is in when the person names
	// none.
	Currency string
	// Locale is the person's language, e.g. "fr-FR"; empty is English.
	// Answers, questions and numbers follow it.
	Locale string
	// History is the open exchange only: the last request and its reply,
	// and the questions and proposals it answers. Earlier says more came
	// before, for the model to look up with get_chat_history.
	History []Entry
	Earlier bool
	Memory  Memory       // working memory snapshot
	Steps   []StepRecord // what ran in this turn so far, results included
	Tools   []ToolSpec
	// Correction is set on the one corrective retry: what was wrong with
	// the previous output.
	Correction string
	// Failure is set on the one re-plan: why a step failed.
	Failure string
}

// StepRecord is one tool call of this turn and how it ended, as the model
// sees it. Data is tool output: data, never instructions.
type StepRecord struct {
	CallID string          `json:"call_id"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	OK     bool            `json:"ok"`
	Data   json.RawMessage `json:"data,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Code is the failure's code (contracts.Code*), when it failed.
	Code string `json:"code,omitempty"`
	// RetryAfter is, for a rate limit, how many seconds to wait.
	RetryAfter int             `json:"retry_after_s,omitempty"`
	Decision   string          `json:"decision,omitempty"` // approved | rejected | edited, for proposals
	Edited     json.RawMessage `json:"edited,omitempty"`   // the args the user chose instead
	// ProposalID is the approved proposal the call ran, for a change.
	ProposalID string `json:"proposal_id,omitempty"`
}

// Model decides the next step of a turn. A Model may stream answer tokens
// through TokenSinkFrom(ctx); the final Decision still carries the whole
// content. An error wrapping ErrInvalidOutput means the model answered
// with something that is not a decision: the turn gets its one corrective
// retry. Any other error means the model could not be asked.
type Model interface {
	Decide(ctx context.Context, p Prompt) (Decision, error)
}

// A LocalModel is a Model whose calls cost nothing but this process's
// time and send nothing to the person while they run (the offline
// model). A call to any other model costs tokens and may stream text to
// the person, so it is made only from a state known to be the stored one
// (see applyOnce).
type LocalModel interface {
	Model
	Local() bool
}

// isLocal reports whether m is a LocalModel that says it is local.
func isLocal(m Model) bool {
	l, ok := m.(LocalModel)
	return ok && l.Local()
}

// ErrInvalidOutput marks a model reply that is not a valid decision.
var ErrInvalidOutput = errors.New("invalid model output")

// TokenSink receives answer text as the model produces it.
type TokenSink func(text string)

type tokenSinkKey struct{}

// WithTokenSink returns ctx carrying sink.
func WithTokenSink(ctx context.Context, sink TokenSink) context.Context {
	return context.WithValue(ctx, tokenSinkKey{}, sink)
}

// TokenSinkFrom returns the sink on ctx, or one that drops tokens.
func TokenSinkFrom(ctx context.Context) TokenSink {
	if s, ok := ctx.Value(tokenSinkKey{}).(TokenSink); ok && s != nil {
		return s
	}
	return func(string) {}
}

type tenantKey struct{}

// WithTenant names the tenant a model call is for (the orchestrator sets
// it), so adapters can count usage per tenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant on ctx, or "".
func TenantFrom(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}
