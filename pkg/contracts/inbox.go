package contracts

import (
	"encoding/json"
	"time"
)

// The notifier answers the ingress, which keeps no database, by core NATS
// request/reply on purser.notifier.<op>.<tenant>.<user>: one op per
// request type below, each with its own reply type. Tenant and user come
// from the subject, which only the ingress names, after authentication;
// no request carries them. Every reply embeds InboxFailure: when its Error
// is set, nothing else is.

// ResumeRequest asks for one page of the user's stored frames after
// AfterSeq, in seq order (op resume). Limit 0 takes the notifier's
// default page.
type ResumeRequest struct {
	AfterSeq int64 `json:"after_seq,omitempty" validate:"gte=0"`
	Limit    int   `json:"limit,omitempty" validate:"gte=0,lte=1000"`
}

// ResumeReply is one page of frames: encoded ServerFrames in seq order,
// each with its seq; More says another page follows after the last one.
type ResumeReply struct {
	Frames []json.RawMessage `json:"frames,omitempty"`
	More   bool              `json:"more,omitempty"`
	InboxFailure
}

// NotificationsRequest lists the user's inbox, newest first (op
// notifications): only the unread ones when Unread is set.
type NotificationsRequest struct {
	Unread bool `json:"unread,omitempty"`
	Limit  int  `json:"limit,omitempty" validate:"gte=0,lte=1000"`
}

// NotificationsReply is the user's inbox.
type NotificationsReply struct {
	Notifications []Notification `json:"notifications,omitempty"`
	InboxFailure
}

// MarkReadRequest marks one of the user's notifications read (op read).
// Another user's id is not found, like an unknown one.
type MarkReadRequest struct {
	ID string `json:"id" validate:"required,purserid"`
}

// MarkReadReply says the notification is read (or why not).
type MarkReadReply struct {
	InboxFailure
}

// TurnFramesRequest asks for the user's stored frames of one turn (op
// turn), so that a repeated message or confirm is answered with the
// outcome the first one had.
type TurnFramesRequest struct {
	TurnID string `json:"turn_id" validate:"required,purserid"`
}

// TurnFramesReply holds the turn's frames in seq order, each with its seq.
type TurnFramesReply struct {
	Frames []json.RawMessage `json:"frames,omitempty"`
	InboxFailure
}

// AuditRequest asks for the latest audit entries of the tenant and user
// its subject names (op audit), in the scope the ingress states from the
// caller's roles: AuditScopeOwn (also what an empty scope means) for the
// user's own calls, AuditScopeTenant, for an owner only, for every call
// of the tenant with other people's arguments left out.
type AuditRequest struct {
	Limit int    `json:"limit,omitempty" validate:"gte=0,lte=1000"`
	Scope string `json:"scope,omitempty" validate:"omitempty,oneof=own tenant"`
}

// The scopes of an AuditRequest.
const (
	AuditScopeOwn    = "own"
	AuditScopeTenant = "tenant"
)

// AuditReply is the asked audit entries, newest first.
type AuditReply struct {
	Audit []AuditEntry `json:"audit,omitempty"`
	InboxFailure
}

// MatchRequest asks for the one pending proposal of the user's
// conversation that names exactly this call (op match): the original chat
// contract confirmed a call by restating its tool and arguments.
type MatchRequest struct {
	ConversationID string          `json:"conversation_id" validate:"required,purserid"`
	Tool           string          `json:"tool" validate:"required,purserid"`
	Args           json.RawMessage `json:"args,omitempty"`
}

// MatchReply names the matching proposal; none, or more than one, is an
// InboxConflict.
type MatchReply struct {
	ProposalID string `json:"proposal_id,omitempty"`
	InboxFailure
}

// UserMessageRequest has the notifier store what the user wrote in turn
// TurnID as a frame of its conversation and deliver it to all the user's
// sockets (op user_message). ID is the client's id for the message.
type UserMessageRequest struct {
	TurnID         string `json:"turn_id" validate:"required,purserid"`
	ConversationID string `json:"conversation_id" validate:"required,purserid"`
	ID             string `json:"id,omitempty" validate:"omitempty,purserid"`
	Text           string `json:"text" validate:"required_without=Upload,max=4000,text"`
	// Upload is the file sent with the text, if any (POST /v1/uploads).
	Upload *Upload `json:"upload,omitempty"`
}

// UserMessageReply says whether the message was stored before: then its
// turn was sent before (and may have finished).
type UserMessageReply struct {
	Seen bool `json:"seen,omitempty"`
	InboxFailure
}

// ConversationsRequest lists the user's conversations, the latest used
// first (op conversations).
type ConversationsRequest struct {
	Limit int `json:"limit,omitempty" validate:"gte=0,lte=1000"`
}

// ConversationsReply is the user's conversations.
type ConversationsReply struct {
	Conversations []ConversationSummary `json:"conversations,omitempty"`
	InboxFailure
}

// HistoryRequest asks for one page of a conversation's frames before
// BeforeSeq (0: the newest), oldest first (op history).
type HistoryRequest struct {
	ConversationID string `json:"conversation_id" validate:"required,purserid"`
	BeforeSeq      int64  `json:"before_seq,omitempty" validate:"gte=0"`
	Limit          int    `json:"limit,omitempty" validate:"gte=0,lte=1000"`
}

// HistoryReply is one page of the conversation's frames, oldest first,
// each with its seq; More says older frames remain.
type HistoryReply struct {
	Frames []json.RawMessage `json:"frames,omitempty"`
	More   bool              `json:"more,omitempty"`
	InboxFailure
}

// InboxFailure is the part every notifier reply shares: why the request
// failed, when it did. A failure encodes as {"error":{...}} and decodes
// into any reply type.
type InboxFailure struct {
	Error *InboxError `json:"error,omitempty"`
}

// Failure returns the reply's error, nil when the request succeeded.
func (f InboxFailure) Failure() *InboxError { return f.Error }

// InboxError says why a notifier request failed, without internals.
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

// AuditEntry is one tool call in a tenant's audit log: who called which
// tool, the arguments (secrets redacted), the outcome and how long it
// took. Args is left out of another person's entry.
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
// (its first words) and when it was started and last used (for the
// conversation in use, kept to the minute; the list's order is the order
// of use).
type ConversationSummary struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SettingsRequest reads the user's settings (op settings) and, when
// Language is set, first makes it the language of their answers and of
// their chat. The language is the one setting changed without a proposal:
// it moves no money and changes no amount, and the chat's language switch
// sets it. Currency, time zone and date order change amounts and dates
// read from statements, so they change through set_preferences, after
// the person's yes.
type SettingsRequest struct {
	Language *string `json:"language,omitempty" validate:"omitempty,oneof=en fr"`
}

// SettingsReply is the user's settings as they stand; an empty field is
// not set.
type SettingsReply struct {
	Language  string `json:"language,omitempty"`
	Currency  string `json:"currency,omitempty"`
	Timezone  string `json:"timezone,omitempty"`
	DateOrder string `json:"date_order,omitempty"`
	InboxFailure
}
