package contracts

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"
)

// Client frame types (client → server).
const (
	FrameMessage = "message"
	FrameConfirm = "confirm"
	FrameResume  = "resume"
	FramePing    = "ping"
	// FrameConversations asks for the person's conversations; the server
	// answers with a conversations frame (the same list as GET
	// /v1/conversations). A new conversation needs no frame: a message
	// with a conversation id not used before starts one.
	FrameConversations = "conversations"
)

// Server frame types (server → client).
const (
	FrameAck          = "ack"
	FrameClarify      = "clarify"
	FrameProposal     = "proposal"
	FrameToken        = "token"
	FrameToolStart    = "tool_start"
	FrameToolResult   = "tool_result"
	FrameAnswer       = "answer"
	FrameError        = "error"
	FrameNotification = "notification"
	FramePong         = "pong"
	// FrameUserMessage is the person's own message, stored and delivered
	// like every other frame, so every device shows both sides.
	FrameUserMessage = "user_message"
)

// MessageFrame is a person's text in a conversation. ID is the client's id
// for the message; it becomes the turn id, so a resent frame is one turn.
type MessageFrame struct {
	Type           string `json:"type" validate:"required,eq=message"`
	ID             string `json:"id" validate:"required,purserid"`
	ConversationID string `json:"conversation_id" validate:"required,purserid"`
	Text           string `json:"text" validate:"required,max=4000"`
	Timezone       string `json:"timezone,omitempty" validate:"omitempty,tz"`
	// Locale is the person's language and region as the client knows it
	// (e.g. "fr-FR"); empty, their language setting applies.
	Locale string `json:"locale,omitempty" validate:"omitempty,max=35,locale"`
}

// ConfirmFrame decides a proposal, or with decision approve_all approves
// the 2 to MaxBatch proposals ProposalIDs names, all or none. ID
// (optional) is the client's id for the decision; resending the same id is
// one decision. ConversationID defaults to the conversation of the
// connection's latest message.
type ConfirmFrame struct {
	Type           string          `json:"type" validate:"required,eq=confirm"`
	ID             string          `json:"id,omitempty" validate:"omitempty,purserid"`
	ConversationID string          `json:"conversation_id,omitempty" validate:"omitempty,purserid"`
	ProposalID     string          `json:"proposal_id,omitempty" validate:"required_unless=Decision approve_all,excluded_if=Decision approve_all,omitempty,purserid"`
	ProposalIDs    []string        `json:"proposal_ids,omitempty" validate:"required_if=Decision approve_all,excluded_unless=Decision approve_all,omitempty,min=2,max=20,unique,dive,purserid"`
	Decision       string          `json:"decision" validate:"required,oneof=approve reject edit approve_all"`
	Args           json.RawMessage `json:"args,omitempty"`
}

// ResumeFrame asks for every frame after AfterSeq (tokens excepted).
type ResumeFrame struct {
	Type     string `json:"type" validate:"required,eq=resume"`
	AfterSeq int64  `json:"after_seq" validate:"gte=0"`
}

// PingFrame keeps a connection alive; the server answers pong.
type PingFrame struct {
	Type string `json:"type" validate:"required,eq=ping"`
}

// ConversationsFrame asks for the person's conversations, the latest used
// first. ID, when given, comes back in the answer.
type ConversationsFrame struct {
	Type  string `json:"type" validate:"required,eq=conversations"`
	ID    string `json:"id,omitempty" validate:"omitempty,purserid"`
	Limit int    `json:"limit,omitempty" validate:"gte=0,lte=200"`
}

// ClientFrame is one decoded client frame: exactly one field is set.
type ClientFrame struct {
	Message       *MessageFrame
	Confirm       *ConfirmFrame
	Resume        *ResumeFrame
	Ping          *PingFrame
	Conversations *ConversationsFrame
}

// DecodeClientFrame decodes and validates one client frame, choosing the
// type by its "type" field. Errors are *ValidationError.
func DecodeClientFrame(data []byte) (ClientFrame, error) {
	var head struct {
		Type string `json:"type"`
	}
	if len(data) > MaxMessageBytes {
		return ClientFrame{}, &ValidationError{Problem: "frame is too large"}
	}
	if !utf8.Valid(data) {
		return ClientFrame{}, &ValidationError{Problem: "frame is not valid UTF-8"}
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return ClientFrame{}, jsonError(err)
	}
	var f ClientFrame
	switch head.Type {
	case FrameMessage:
		f.Message = new(MessageFrame)
		if err := Decode(data, f.Message); err != nil {
			return f, err
		}
		text, err := CleanText("text", f.Message.Text)
		if err != nil {
			return f, err
		}
		if strings.TrimSpace(text) == "" {
			return f, &ValidationError{Field: "text", Problem: "is required"}
		}
		f.Message.Text = text
		return f, nil
	case FrameConfirm:
		f.Confirm = new(ConfirmFrame)
		return f, Decode(data, f.Confirm)
	case FrameResume:
		f.Resume = new(ResumeFrame)
		return f, Decode(data, f.Resume)
	case FramePing:
		f.Ping = new(PingFrame)
		return f, Decode(data, f.Ping)
	case FrameConversations:
		f.Conversations = new(ConversationsFrame)
		return f, Decode(data, f.Conversations)
	case "":
		return ClientFrame{}, &ValidationError{Field: "type", Problem: "is required"}
	}
	return ClientFrame{}, &ValidationError{Field: "type", Problem: "must be one of: message, confirm, resume, ping, conversations"}
}

// ServerFrame is one frame sent to a client. Seq increases per user across
// all of the user's connections; token, tool_start, tool_result, ack and
// pong frames carry no seq and are not replayed on resume. Exactly one
// body field matches Type.
type ServerFrame struct {
	Type           string            `json:"type" validate:"required,oneof=ack user_message clarify proposal token tool_start tool_result answer error notification pong conversations"`
	Seq            int64             `json:"seq,omitempty" validate:"gte=0"`
	ConversationID string            `json:"conversation_id,omitempty" validate:"omitempty,purserid"`
	TurnID         string            `json:"turn_id,omitempty" validate:"omitempty,purserid"`
	At             time.Time         `json:"at"`
	Ack            *AckBody          `json:"ack,omitempty"`
	Clarify        *Clarify          `json:"clarify,omitempty"`
	Proposal       *Proposal         `json:"proposal,omitempty"`
	Token          *TokenBody        `json:"token,omitempty"`
	Tool           *ToolProgress     `json:"tool,omitempty"`
	Answer         *Answer           `json:"answer,omitempty"`
	Error          *ErrorBody        `json:"error,omitempty"`
	Notification   *Notification     `json:"notification,omitempty"`
	UserMessage    *UserMessage      `json:"user_message,omitempty"`
	Conversations  *ConversationList `json:"conversations,omitempty"`
}

// ConversationList answers a conversations frame: ID is the request's.
type ConversationList struct {
	ID    string                `json:"id,omitempty" validate:"omitempty,purserid"`
	Items []ConversationSummary `json:"items"`
}

// AckBody confirms that a client frame was accepted and queued.
type AckBody struct {
	ID string `json:"id" validate:"required,purserid"`
}

// TokenBody is a piece of an answer being streamed.
type TokenBody struct {
	Text  string `json:"text" validate:"max=4000"`
	Index int    `json:"index" validate:"gte=0"`
}

// ErrorBody is a short error for a client. It never carries internals.
type ErrorBody struct {
	Code    string `json:"code" validate:"required,max=64"`
	Message string `json:"message" validate:"required,max=1000"`
	// ID names the client frame the error is about, when there is one.
	ID string `json:"id,omitempty" validate:"omitempty,purserid"`
	// RetryAfter is how many seconds to wait before asking again, when
	// known (a rate limit).
	RetryAfter int `json:"retry_after_s,omitempty" validate:"gte=0"`
	// Refused is, for a refused approve_all, each proposal that made it
	// refuse and why (see RefusedProposal).
	Refused []RefusedProposal `json:"refused,omitempty" validate:"max=100,dive"`
}

// Error codes sent to clients.
const (
	ErrCodeBadFrame    = "bad_frame"
	ErrCodeRateLimited = "rate_limited"
	ErrCodeUnavailable = "unavailable"
	ErrCodeForbidden   = "forbidden"
)

// UserMessage is what the person wrote: ID is their client's id for the
// message (so the device that sent it does not show it twice).
type UserMessage struct {
	ID   string `json:"id,omitempty" validate:"omitempty,purserid"`
	Text string `json:"text" validate:"max=4000,text"`
	// Upload names the file sent with the text, if any.
	Upload *Upload `json:"upload,omitempty"`
}
