// Package toolrunner runs tools for the orchestrator: each tool has its own
// durable consumer on purser.tool.request.<tool>. Every call is validated,
// authorised from the signed request (never from the model's arguments),
// rate limited per user and tool across replicas, run under a deadline with
// its output capped, audited, and answered on
// purser.tool.result.<tenant>.<conversation>. A call id already done returns
// its stored result; a mutation runs only for an approved proposal and marks
// it executed in the same transaction as the change.
package toolrunner

import (
	"context"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Caller is who a call runs for, taken from the request.
type Caller struct {
	TenantID, UserID, ConversationID string
	// TurnID is the turn the call is part of.
	TurnID   string
	Roles    []string
	Location *time.Location
}

// Call is one validated tool call.
type Call struct {
	ID     string
	Caller Caller
	Args   any // a pointer to the tool's contracts args struct
	Now    time.Time
}

// Output is what a tool returns; Data is encoded as the result's data.
type Output struct {
	Data    any
	Total   *int64
	Warning string
	// Jobs are statement imports to start once a mutation has committed.
	Jobs []contracts.ImportJob
}

// Tool is one tool the runner serves.
type Tool struct {
	Name     string
	Kind     contracts.ToolKind
	Deadline time.Duration
	// OutputCap bounds the encoded data; longer lists are cut and the
	// result marked truncated.
	OutputCap int
	// PerMinute is how many calls one user may make in a minute.
	PerMinute int
	// Run does the work. For a mutation, tx is the transaction the change
	// must be written in; the proposal is marked executed in it too.
	Run func(ctx context.Context, tx Tx, c Call) (Output, error)
}

// ToolError is an error a tool returns for the model to read: a code and a
// message a person understands.
type ToolError struct {
	Code    string
	Message string
}

func (e *ToolError) Error() string { return e.Code + ": " + e.Message }

func fail(code, msg string) error { return &ToolError{Code: code, Message: msg} }
