package contracts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Type names carried in the Purser-Type header.
const (
	TypeUserTurn     = "user_turn"
	TypeToolRequest  = "tool_request"
	TypeToolResult   = "tool_result"
	TypeClarify      = "clarify"
	TypeProposal     = "proposal"
	TypeToolProgress = "tool_progress"
	TypeAnswer       = "answer"
	TypeTurnError    = "turn_error"
	TypeNotification = "notification"
	TypeImportJob    = "import_job"
)

// Roles a principal can hold.
const (
	RoleOwner  = "owner"
	RoleMember = "member"
	RoleViewer = "viewer"
)

// UserTurn is one thing a person said or decided: either text or a confirm.
type UserTurn struct {
	TurnID         string   `json:"turn_id" validate:"required,purserid"`
	TenantID       string   `json:"tenant_id" validate:"required,purserid"`
	UserID         string   `json:"user_id" validate:"required,purserid"`
	Roles          []string `json:"roles" validate:"required,min=1,max=3,dive,oneof=owner member viewer"`
	ConversationID string   `json:"conversation_id" validate:"required,purserid"`
	Text           string   `json:"text,omitempty" validate:"required_without_all=Confirm Upload,excluded_with=Confirm,max=4000,text"`
	Confirm        *Confirm `json:"confirm,omitempty"`
	// Upload is a file the person sent with this turn (POST /v1/uploads),
	// stored on the bus (internal/uploads) until a tool reads it; the
	// text, if any, is what they said with it.
	Upload *Upload `json:"upload,omitempty" validate:"omitempty,excluded_with=Confirm"`
	// Timezone is the user's time zone as their client or token says it;
	// empty when neither does (then their setting applies, else UTC).
	Timezone string `json:"timezone,omitempty" validate:"omitempty,tz"`
	// Currency is the user's currency as their client knows it (the chat
	// contract's userContext), when it says one.
	Currency string `json:"currency,omitempty" validate:"omitempty,currency"`
	// Locale is the person's language and region as their client says
	// it (the chat contract's userContext.locale, e.g. "fr-FR"); empty
	// when it says none (then their language setting applies, else
	// English).
	Locale string    `json:"locale,omitempty" validate:"omitempty,max=35,locale"`
	SentAt time.Time `json:"sent_at" validate:"required"`
}

// Upload names an uploaded file. Its kind is what the content is (never
// the name): "text" (CSV, OFX, camt.053, MT940, QIF), "pdf" or "image".
type Upload struct {
	DocumentID string `json:"document_id" validate:"required,purserid"`
	Filename   string `json:"filename" validate:"required,max=255,text"`
	Kind       string `json:"kind" validate:"required,oneof=text pdf image"`
	Size       int64  `json:"size" validate:"gte=1"`
	SHA256     string `json:"sha256" validate:"required,len=64,hexadecimal"`
}

// DocumentID names a user's copy of a file: the same bytes always map to
// the same document, so a file is imported once however often it is
// fetched or uploaded. sum is the file's SHA-256 in hex.
func DocumentID(tenant, user string, data []byte) (id, sum string) {
	h := sha256.Sum256(data)
	sum = hex.EncodeToString(h[:])
	k := sha256.Sum256([]byte(tenant + "\x00" + user + "\x00" + sum))
	return "doc-" + hex.EncodeToString(k[:])[:32], sum
}

// Decisions a Confirm may carry.
const (
	DecisionApprove    = "approve"
	DecisionReject     = "reject"
	DecisionEdit       = "edit"
	DecisionApproveAll = "approve_all"
)

// MaxBatch is how many proposals one approve_all may name.
const MaxBatch = 20

// Confirm is a person's decision on stored proposals. It names only
// proposals: a client can never send a tool to run. ProposalID names the
// one proposal of approve, reject and edit; ProposalIDs the 2 to MaxBatch
// proposals of approve_all (and ProposalID is then empty). Args is
// required for "edit" and refused otherwise; it is validated against the
// proposal's own tool schema by the orchestrator.
type Confirm struct {
	ProposalID  string          `json:"proposal_id,omitempty" validate:"required_unless=Decision approve_all,excluded_if=Decision approve_all,omitempty,purserid"`
	ProposalIDs []string        `json:"proposal_ids,omitempty" validate:"required_if=Decision approve_all,excluded_unless=Decision approve_all,omitempty,min=2,max=20,unique,dive,purserid"`
	Decision    string          `json:"decision" validate:"required,oneof=approve reject edit approve_all"`
	Args        json.RawMessage `json:"args,omitempty"`
}

// ToolRequest asks a toolrunner to run one tool. Tenant, user and roles come
// from the signed turn, never from Args. ProposalID is set for a mutation and
// names the approved proposal whose canonical args must equal Args.
type ToolRequest struct {
	CallID         string          `json:"call_id" validate:"required,purserid"`
	TurnID         string          `json:"turn_id" validate:"required,purserid"`
	TenantID       string          `json:"tenant_id" validate:"required,purserid"`
	UserID         string          `json:"user_id" validate:"required,purserid"`
	Roles          []string        `json:"roles" validate:"required,min=1,max=3,dive,oneof=owner member viewer"`
	ConversationID string          `json:"conversation_id" validate:"required,purserid"`
	Tool           string          `json:"tool" validate:"required,purserid"`
	Args           json.RawMessage `json:"args" validate:"required"`
	ProposalID     string          `json:"proposal_id,omitempty" validate:"omitempty,purserid"`
	Timezone       string          `json:"timezone,omitempty" validate:"omitempty,tz"`
	Deadline       time.Time       `json:"deadline" validate:"required"`
}

// ToolResult is the envelope every tool answers with. Data is the tool's
// output as JSON, already capped; Meta.Truncated says when it was cut.
type ToolResult struct {
	CallID  string          `json:"call_id" validate:"required,purserid"`
	TurnID  string          `json:"turn_id,omitempty" validate:"omitempty,purserid"`
	Tool    string          `json:"tool" validate:"required,purserid"`
	OK      bool            `json:"ok"`
	Data    json.RawMessage `json:"data,omitempty"`
	Total   *int64          `json:"total,omitempty"`
	Warning string          `json:"warning,omitempty" validate:"max=1000"`
	Error   *ToolError      `json:"error,omitempty" validate:"required_if=OK false"`
	Meta    ToolMeta        `json:"meta"`
}

// ToolError codes.
const (
	CodeInvalidArgs = "invalid_args"
	CodeForbidden   = "forbidden"
	CodeNotFound    = "not_found"
	CodeRateLimited = "rate_limited"
	CodeTimeout     = "timeout"
	// CodeTimedOut is a tool that ran past its deadline (OCR of a large
	// scan, a slow mail server): nothing was changed, and the same call
	// may be tried again.
	CodeTimedOut        = "timed_out"
	CodeNotConfirmed    = "not_confirmed"
	CodeInternal        = "internal"
	CodeUnknownTool     = "unknown_tool"
	CodeBadInput        = "bad_input"
	CodeProposalInvalid = "proposal_invalid"
	// CodeProposalExpired is a decision on a proposal nobody approved in
	// time: nothing was changed, and it can be proposed again.
	CodeProposalExpired = "proposal_expired"
	CodeModel           = "model_error"
	CodeLimit           = "limit_reached"
)

// ToolError is a short machine code and a message a person can read.
type ToolError struct {
	Code       string `json:"code" validate:"required,max=64"`
	Message    string `json:"message" validate:"required,max=1000"`
	RetryAfter int    `json:"retry_after_s,omitempty" validate:"gte=0"`
}

// ToolMeta describes how a call ran.
type ToolMeta struct {
	DurationMS int64 `json:"duration_ms" validate:"gte=0"`
	Bytes      int64 `json:"bytes" validate:"gte=0"`
	Truncated  bool  `json:"truncated"`
}

// Clarify asks the person a question; nothing runs.
type Clarify struct {
	TurnID   string `json:"turn_id" validate:"required,purserid"`
	Question string `json:"question" validate:"required,max=2000"`
}

// Proposal is a change waiting for the person's yes. Args are the canonical
// arguments the server stored; Summary is built by the server from them.
type Proposal struct {
	ProposalID string          `json:"proposal_id" validate:"required,purserid"`
	TurnID     string          `json:"turn_id" validate:"required,purserid"`
	Tool       string          `json:"tool" validate:"required,purserid"`
	Args       json.RawMessage `json:"args" validate:"required"`
	Summary    string          `json:"summary" validate:"required,max=2000"`
	ExpiresAt  time.Time       `json:"expires_at" validate:"required"`
	// Status is the proposal's outcome when a frame is replayed (resume,
	// history) after it was decided: approved, rejected, executed,
	// expired (nobody said yes in time) or superseded (a newer proposal
	// replaced it). A live proposal has none: it waits for the decision.
	Status string `json:"status,omitempty" validate:"omitempty,oneof=pending approved rejected executed expired superseded"`
}

// ToolProgress reports a tool call starting or finishing.
type ToolProgress struct {
	CallID string `json:"call_id" validate:"required,purserid"`
	Tool   string `json:"tool" validate:"required,purserid"`
	Status string `json:"status" validate:"required,oneof=started succeeded failed"`
	// Summary says, once the call ended, what it found or did ("Your
	// expenses this month: ...", "Deleted expense #3"), for clients that
	// show tool results as they come.
	Summary string `json:"summary,omitempty" validate:"max=4000"`
}

// FrameType is the client frame progress p goes out as: tool_start for a
// call that started, tool_result for one that ended.
func (p ToolProgress) FrameType() string {
	if p.Status == "started" {
		return FrameToolStart
	}
	return FrameToolResult
}

// Answer ends a turn with text for the person. The legacy fields carry what
// the original chat function returned for expense changes and listings.
type Answer struct {
	TurnID    string        `json:"turn_id" validate:"required,purserid"`
	Content   string        `json:"content" validate:"required,max=20000"`
	Citations []Citation    `json:"citations,omitempty" validate:"max=50,dive"`
	Added     *ExpenseView  `json:"added,omitempty"`
	Updated   *ExpenseView  `json:"updated,omitempty"`
	Deleted   *ExpenseView  `json:"deleted,omitempty"`
	Listed    []ExpenseView `json:"listed,omitempty" validate:"max=500,dive"`
	Balance   *Balance      `json:"balance,omitempty"`
	// Batch reports each proposal an approve_all ran, in the order named.
	Batch []BatchItem `json:"batch,omitempty" validate:"max=20,dive"`
}

// BatchItem is how one proposal of an approve_all ended: executed, or
// failed (the tool refused it; Summary says why). The others of the
// batch ran all the same.
type BatchItem struct {
	ProposalID string `json:"proposal_id" validate:"required,purserid"`
	Status     string `json:"status" validate:"required,oneof=executed failed"`
	Summary    string `json:"summary" validate:"max=4000"`
}

// Citation points at what an answer relies on: a record (Kind, ID, Title,
// URL, Score: a ledger entry, document or message a search found, the
// source a person opens) or, for answers that used no search, the tool
// output (CallID, Tool) a client may link to the tool line but never
// shows as a source by its tool name. Record citations of one answer are
// unique by kind and id and sorted by score, best first; CallID names the
// search that found them.
type Citation struct {
	CallID string  `json:"call_id" validate:"required,purserid"`
	Tool   string  `json:"tool" validate:"required,purserid"`
	Kind   string  `json:"kind,omitempty" validate:"omitempty,oneof=entry document message"`
	ID     string  `json:"id,omitempty" validate:"required_with=Kind,max=128"`
	Title  string  `json:"title,omitempty" validate:"max=300"`
	URL    string  `json:"url,omitempty" validate:"max=300"`
	Score  float64 `json:"score,omitempty" validate:"gte=0,lte=1"`
}

// TurnError ends a turn that could not finish, with a short reason.
type TurnError struct {
	TurnID  string `json:"turn_id" validate:"required,purserid"`
	Code    string `json:"code" validate:"required,max=64"`
	Message string `json:"message" validate:"required,max=1000"`
	// RetryAfter is how many seconds to wait before asking again, when the
	// turn ended on a rate limit that says.
	RetryAfter int `json:"retry_after_s,omitempty" validate:"gte=0"`
	// Refused names each proposal that made an approve_all refuse the
	// whole batch, and why, so that a client closes those cards and opens
	// the others again without reading ids out of the message.
	Refused []RefusedProposal `json:"refused,omitempty" validate:"max=100,dive"`
}

// RefusedProposal is one proposal an approve_all could not take: Reason
// is "expired" (it waited too long), "in_plan" (a step of a longer task,
// approved on its own) or "not_waiting" (unknown to this conversation,
// or already decided).
type RefusedProposal struct {
	ProposalID string `json:"proposal_id" validate:"required,purserid"`
	Reason     string `json:"reason" validate:"required,oneof=expired in_plan not_waiting"`
}

// Notification is an inbox entry, such as a finished import.
type Notification struct {
	ID        string          `json:"id" validate:"required,purserid"`
	Kind      string          `json:"kind" validate:"required,oneof=import_completed import_failed info mail_disconnected proposal_expiring proposal_expired"`
	Title     string          `json:"title" validate:"required,max=200"`
	Body      string          `json:"body" validate:"max=4000"`
	Data      json.RawMessage `json:"data,omitempty"`
	CreatedAt time.Time       `json:"created_at" validate:"required"`
	Read      bool            `json:"read,omitempty"`
}

// Money is an amount in integer minor units of an ISO 4217 currency.
type Money struct {
	Minor    int64  `json:"minor"`
	Currency string `json:"currency" validate:"required,currency"`
}

// ExpenseView is an expense as clients see it.
type ExpenseView struct {
	ID       int64  `json:"id" validate:"gte=1"`
	Item     string `json:"item" validate:"required,max=200"`
	Amount   Money  `json:"amount"`
	Date     string `json:"date" validate:"required,date"`
	Category string `json:"category,omitempty" validate:"max=64"`
}

// Balance is the total spent in a range.
type Balance struct {
	Range string  `json:"range" validate:"required,daterange"`
	From  string  `json:"from" validate:"required,date"`
	To    string  `json:"to" validate:"required,date"`
	Total []Money `json:"total" validate:"dive"`
	Count int     `json:"count" validate:"gte=0"`
	// Transfers is how many lines of the range were transfers between
	// the person's own accounts, left out of Total and Count.
	Transfers int `json:"transfers,omitempty" validate:"gte=0"`
	// Query is the words the total was narrowed to, as get_balance's
	// query named them; empty for every entry.
	Query string `json:"query,omitempty" validate:"omitempty,max=100,text"`
}

// ImportJob asks the statement importer to import one stored document.
// fetch_email_attachments queues one per new attachment; the importer
// ends each with a Notification to the user.
type ImportJob struct {
	TenantID   string `json:"tenant_id" validate:"required,purserid"`
	UserID     string `json:"user_id" validate:"required,purserid"`
	DocumentID string `json:"document_id" validate:"required,purserid"`
}
