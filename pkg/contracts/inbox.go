package contracts

import (
	"encoding/json"
	"time"
)

// InboxRequest is the body of a request to the notifier on
// purser.notifier.<op>.<tenant>.<user>; each op reads its own fields.
type InboxRequest struct {
	// AfterSeq and Limit page the resume op.
	AfterSeq int64 `json:"after_seq,omitempty" validate:"gte=0"`
	Limit    int   `json:"limit,omitempty" validate:"gte=0,lte=1000"`
	// Unread (and Limit) filter the notifications op.
	Unread bool `json:"unread,omitempty"`
	// ID names the notification the read op marks read.
	ID string `json:"id,omitempty" validate:"omitempty,purserid"`
	// TurnID names the turn whose stored frames the turn op returns.
	TurnID string `json:"turn_id,omitempty" validate:"omitempty,purserid"`
	// ConversationID, Tool and Args ask the match op for the pending
	// proposal of that conversation that names exactly this call (the
	// original chat contract's confirm: {tool, args}).
	ConversationID string          `json:"conversation_id,omitempty" validate:"omitempty,purserid"`
	Tool           string          `json:"tool,omitempty" validate:"omitempty,purserid"`
	Args           json.RawMessage `json:"args,omitempty"`
	// Text (with TurnID, ConversationID and ID, the client's message id)
	// is the user_message op's message to store and deliver.
	Text string `json:"text,omitempty" validate:"max=4000,text"`
	// BeforeSeq pages the history op backwards (0: the newest).
	BeforeSeq int64 `json:"before_seq,omitempty" validate:"gte=0"`
}

// InboxReply answers an InboxRequest. When Error is set nothing else is.
type InboxReply struct {
	// Frames are encoded ServerFrames in seq order, each with its seq;
	// More says another page follows after the last one.
	Frames        []json.RawMessage `json:"frames,omitempty"`
	More          bool              `json:"more,omitempty"`
	Notifications []Notification    `json:"notifications,omitempty"`
	Audit         []AuditEntry      `json:"audit,omitempty"`
	// ProposalID is the match op's answer.
	ProposalID string `json:"proposal_id,omitempty"`
	// Conversations is the conversations op's answer.
	Conversations []ConversationSummary `json:"conversations,omitempty"`
	// Seen is the user_message op's answer: the message was stored
	// before, so its turn was sent before (and may have finished).
	Seen  bool        `json:"seen,omitempty"`
	Error *InboxError `json:"error,omitempty"`
}

// InboxError says why an inbox request failed, without internals.
type InboxError struct {
	Code    string `json:"code"` // one of the Inbox* codes
	Message string `json:"message"`
}

func (e *InboxError) Error() string { return e.Code + ": " + e.Message }

// Codes of InboxError.
const (
	InboxBadRequest  = "bad_request"
	InboxNotFound    = "not_found"
	InboxUnavailable = "unavailable"
	InboxConflict    = "conflict"
)

// AuditEntry is one tool call in a tenant's audit log, as an owner reads
// it: who called which tool, the arguments (secrets redacted), the outcome
// and how long it took.
type AuditEntry struct {
	ID         string          `json:"id"`
	UserID     string          `json:"user_id"`
	Tool       string          `json:"tool"`
	CallID     string          `json:"call_id"`
	Outcome    string          `json:"outcome"`
	Args       json.RawMessage `json:"args,omitempty"`
	DurationMS int64           `json:"duration_ms"`
	CreatedAt  time.Time       `json:"created_at"`
}

// ConversationSummary is one of a user's conversations: its id, a title
// (its first words) and when it was started and last used.
type ConversationSummary struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}
