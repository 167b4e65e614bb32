package ingress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// DefaultChatConversation is the conversation of a user's POST /v1/chat
// requests that name none: the original chat function had one conversation
// per person, so each user of a tenant gets their own, "chat-<user>" (or,
// for a user id too long to fit a 64-character id, "chat-" and a hash of it).
// The id is predictable, and need not be secret: conversations are kept
// per user, so another user who names it reaches a conversation of their
// own, never this one.
func DefaultChatConversation(userID string) string {
	if id := "chat-" + userID; contracts.ValidID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(userID))
	return "chat-" + hex.EncodeToString(sum[:16])
}

// chatRequest is the body of POST /v1/chat, the original chat function's
// contract: history, then message (or question, its older name) or a
// confirm, and the caller's userContext. History is checked but not used,
// since the conversation's history is kept server-side, except that a body
// with history alone asks its last user message. conversation_id and
// timezone are additions.
type chatRequest struct {
	History        []chatEntry      `json:"history" validate:"max=200,dive"`
	Message        string           `json:"message,omitempty" validate:"max=4000"`
	Question       string           `json:"question,omitempty" validate:"max=4000"`
	Confirm        *chatConfirm     `json:"confirm,omitempty"`
	ConversationID string           `json:"conversation_id,omitempty" validate:"omitempty,purserid"`
	Timezone       string           `json:"timezone,omitempty" validate:"omitempty,tz"`
	UserContext    *chatUserContext `json:"userContext,omitempty"`
}

// chatUserContext is what the host application knows of the user: their
// time zone and currency are used when the request names none.
type chatUserContext struct {
	Timezone string `json:"timezone,omitempty" validate:"omitempty,tz"`
	Currency string `json:"currency,omitempty" validate:"omitempty,currency"`
	Locale   string `json:"locale,omitempty" validate:"omitempty,max=35"`
}

type chatEntry struct {
	Role    string `json:"role" validate:"required,oneof=user assistant system"`
	Content string `json:"content" validate:"max=20000"`
}

// chatConfirm decides a proposal by its id, or approves several at once
// (decision approve_all with proposal_ids, all or none); or, as the
// original chat contract did, restates the call to approve ({tool, args}),
// which is accepted only when it matches exactly one pending proposal of
// the user's conversation. The turn's own validation (contracts.Confirm)
// says which ids go with which decision.
type chatConfirm struct {
	ProposalID  string          `json:"proposal_id,omitempty" validate:"excluded_with=Tool,omitempty,purserid"`
	ProposalIDs []string        `json:"proposal_ids,omitempty" validate:"excluded_with=Tool,omitempty,max=20,dive,purserid"`
	Decision    string          `json:"decision,omitempty" validate:"required_without=Tool,excluded_with=Tool,omitempty,oneof=approve reject edit approve_all"`
	Args        json.RawMessage `json:"args,omitempty"`
	Tool        string          `json:"tool,omitempty" validate:"omitempty,purserid"`
}

// chatResponse is the answer of POST /v1/chat: the original shape, plus
// the conversation and turn ids.
type chatResponse struct {
	Answer               string                  `json:"answer"`
	ConfirmationRequired bool                    `json:"confirmationRequired,omitempty"`
	Proposal             *contracts.Proposal     `json:"proposal,omitempty"`
	Added                *contracts.ExpenseView  `json:"added,omitempty"`
	Updated              *contracts.ExpenseView  `json:"updated,omitempty"`
	Deleted              *contracts.ExpenseView  `json:"deleted,omitempty"`
	Listed               []contracts.ExpenseView `json:"listed,omitempty"`
	Balance              *contracts.Balance      `json:"balance,omitempty"`
	// Batch reports each proposal an approve_all ran.
	Batch []contracts.BatchItem `json:"batch,omitempty"`
	// Citations are the answer's sources: the records a search found.
	Citations      []contracts.Citation `json:"citations,omitempty"`
	ConversationID string               `json:"conversation_id"`
	TurnID         string               `json:"turn_id"`
	// DocumentID is the uploaded file's, on POST /v1/uploads.
	DocumentID string `json:"document_id,omitempty"`
}

// endsTurn reports whether a frame of type typ ends a turn.
func endsTurn(typ string) bool {
	switch typ {
	case contracts.FrameAnswer, contracts.FrameClarify, contracts.FrameProposal, contracts.FrameError:
		return true
	}
	return false
}

// readBody reads a request's body of at most limit bytes; when it cannot,
// it has answered why (413 past the limit) and ok is false.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSONError(w, http.StatusRequestEntityTooLarge, "too_large", "the body is larger than the limit")
			return nil, false
		}
		writeJSONError(w, http.StatusBadRequest, "bad_request", "the body could not be read")
		return nil, false
	}
	return body, true
}

// serveChat is POST /v1/chat: it publishes the turn like a websocket
// message and answers with the frame that ends it, or streams the turn's
// frames as server-sent events when asked to.
func (in *Ingress) serveChat(w http.ResponseWriter, r *http.Request) {
	in.api("chat", http.MethodPost, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		if !isJSON(r) {
			writeJSONError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
			return
		}
		body, ok := readBody(w, r, in.cfg.MaxChatBytes)
		if !ok {
			return
		}
		var req chatRequest
		if err := contracts.Decode(body, &req); err != nil {
			writeJSONError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
		text := req.Message
		if text == "" {
			text = req.Question
		}
		if text == "" && req.Confirm == nil {
			// History alone: its last user message is the message.
			for i := len(req.History) - 1; i >= 0; i-- {
				if req.History[i].Role == "user" {
					text = req.History[i].Content
					break
				}
			}
		}
		text, err := contracts.CleanText("message", text)
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, "bad_request", err.Error())
			return
		}
		switch {
		case req.Message != "" && req.Question != "":
			writeJSONError(w, http.StatusBadRequest, "bad_request", "send message or question, not both")
			return
		case (text == "") == (req.Confirm == nil):
			writeJSONError(w, http.StatusBadRequest, "bad_request", "exactly one of message (or question) and confirm is required")
			return
		}
		k := userKey{p.TenantID, p.UserID}
		if !in.limits.allow(k, in.now()) {
			in.metrics.rateLimited.Inc()
			w.Header().Set("Retry-After", "1")
			writeJSONError(w, http.StatusTooManyRequests, "rate_limited", "too many messages; wait a moment and try again")
			return
		}
		conv := req.ConversationID
		if conv == "" {
			conv = DefaultChatConversation(p.UserID)
		}
		if req.Confirm != nil && req.Confirm.Tool != "" {
			// The original contract's confirm restates the call.
			reply, err := ask(r.Context(), in, bus.NotifierMatch(), p.TenantID, p.UserID,
				contracts.MatchRequest{ConversationID: conv, Tool: req.Confirm.Tool, Args: req.Confirm.Args})
			var ie *contracts.InboxError
			switch {
			case errors.As(err, &ie) && ie.Code == contracts.InboxConflict:
				writeJSONError(w, http.StatusConflict, "no_matching_proposal", ie.Message)
				return
			case errors.As(err, &ie) && ie.Code == contracts.InboxBadRequest:
				writeJSONError(w, http.StatusBadRequest, "bad_request", ie.Message)
				return
			case err != nil:
				in.notifierFailed(w, err)
				return
			}
			req.Confirm = &chatConfirm{ProposalID: reply.ProposalID, Decision: "approve"}
		}
		input := turnInput{ConversationID: conv, Text: text, Timezone: req.Timezone}
		if req.Confirm != nil {
			input.Confirm = &contracts.Confirm{ProposalID: req.Confirm.ProposalID, ProposalIDs: req.Confirm.ProposalIDs,
				Decision: req.Confirm.Decision, Args: req.Confirm.Args}
		}
		if uc := req.UserContext; uc != nil {
			input.Timezone = firstSet(input.Timezone, uc.Timezone)
			input.Currency = uc.Currency
			if contracts.ValidLocale(uc.Locale) {
				// Hosts have always sent what they liked here ("en_US.UTF-8"):
				// a tag purser cannot read is not an error, just not used.
				input.Locale = uc.Locale
			}
		}
		t := in.newTurn(senderOf(p), input)
		typ := "http_" + contracts.FrameMessage
		if req.Confirm != nil {
			typ = "http_" + contracts.FrameConfirm
		}
		in.metrics.framesIn.WithLabelValues(typ).Inc()
		in.runTurn(w, r, t, in.cfg.ChatTimeout, nil)
	})
}

// runTurn watches the user's deliver subject for the turn's frames,
// publishes the turn, and answers, within timeout. up is the file an
// upload's turn carries, nil for a message.
func (in *Ingress) runTurn(w http.ResponseWriter, r *http.Request, t contracts.UserTurn, timeout time.Duration, up *uploaded) {
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	frames, stop, err := in.watchTurn(ctx, t.TenantID, t.UserID, t.TurnID)
	if err != nil {
		in.log.Error("chat: watch deliveries", "tenant", t.TenantID, "err", err)
		writeJSONError(w, http.StatusServiceUnavailable, "unavailable", msgNotQueued)
		return
	}
	defer stop()
	seen, earlier, err := in.seenBefore(ctx, t, "")
	if verr := (*contracts.ValidationError)(nil); errors.As(err, &verr) {
		writeJSONError(w, http.StatusBadRequest, "bad_request", verr.Error())
		return
	}
	if err != nil {
		writeJSONError(w, http.StatusServiceUnavailable, "unavailable", msgNotQueued)
		return
	}
	if end := lastEnd(earlier); t.Confirm != nil && end != nil {
		// A decision made before, sent again: nothing runs twice, and the
		// answer says so at once. A refused edit sent again decided
		// nothing: it is answered as it was the first time.
		if refusedEdit(t, end) {
			in.answerChat(w, t, end, up)
			return
		}
		writeJSONError(w, http.StatusConflict, "already_decided", "that proposal was already decided; nothing was run again")
		return
	}
	repeated, err := in.publishTurn(ctx, t)
	if err != nil {
		in.log.Error("publish turn", "err", err, "tenant", t.TenantID, "turn", t.TurnID)
		writeJSONError(w, http.StatusServiceUnavailable, "unavailable", msgNotQueued)
		return
	}
	if repeated || seen {
		if _, end, err := in.storedOutcome(ctx, t); err == nil && end != nil {
			if t.Confirm != nil && !refusedEdit(t, end) {
				writeJSONError(w, http.StatusConflict, "already_decided", "that proposal was already decided; nothing was run again")
				return
			}
			in.answerChat(w, t, end, up)
			return
		}
	}
	if wantsEventStream(r) {
		in.streamTurn(ctx, w, t, frames, up)
		return
	}
	for {
		select {
		case <-ctx.Done():
			if r.Context().Err() == nil {
				writeJSONError(w, http.StatusGatewayTimeout, "timeout", "no answer in time; the turn may still finish and reach your open sockets")
			}
			return
		case f := <-frames:
			if !endsTurn(f.typ) {
				continue
			}
			in.metrics.wrote(f, in.now())
			in.answerChat(w, t, f, up)
			return
		}
	}
}

// watchTurn subscribes to the user's deliver subject and passes on the
// frames of turnID. The subscription is in place at the server when it
// returns. Frames that end a turn are never dropped; tokens are, if the
// reader falls behind.
func (in *Ingress) watchTurn(ctx context.Context, tenant, user, turnID string) (<-chan *outFrame, func(), error) {
	subject, err := bus.DeliverSubject(tenant, user)
	if err != nil {
		return nil, nil, err
	}
	if err := in.busUp(); err != nil {
		return nil, nil, err
	}
	out := make(chan *outFrame, 256)
	sub, err := in.nc.Subscribe(subject, func(m *nats.Msg) {
		f := newOutFrame(m.Data, m.Header.Get(bus.HeaderCreatedAt))
		if f.turnID != turnID {
			return
		}
		if endsTurn(f.typ) {
			select {
			case out <- f:
			case <-ctx.Done():
			}
			return
		}
		select {
		case out <- f:
		default:
		}
	})
	if err != nil {
		return nil, nil, err
	}
	_ = sub.SetPendingLimits(-1, 64<<20)
	fctx, cancel := context.WithTimeout(ctx, busTimeout)
	defer cancel()
	if err := in.nc.FlushWithContext(fctx); err != nil {
		_ = sub.Unsubscribe()
		return nil, nil, err
	}
	return out, func() { _ = sub.Unsubscribe() }, nil
}

// answerChat answers with the frame f that ended turn t.
func (in *Ingress) answerChat(w http.ResponseWriter, t contracts.UserTurn, f *outFrame, up *uploaded) {
	var sf contracts.ServerFrame
	if err := json.Unmarshal(f.data, &sf); err != nil {
		in.log.Error("chat: unreadable frame", "tenant", t.TenantID, "turn", t.TurnID, "err", err)
		writeJSONError(w, http.StatusBadGateway, "bad_gateway", "the answer could not be read")
		return
	}
	resp := chatResponse{ConversationID: t.ConversationID, TurnID: t.TurnID}
	if up != nil {
		resp.DocumentID = up.DocumentID
	}
	switch {
	case sf.Answer != nil:
		a := sf.Answer
		resp.Answer, resp.Added, resp.Updated, resp.Deleted, resp.Listed, resp.Balance = a.Content, a.Added, a.Updated, a.Deleted, a.Listed, a.Balance
		resp.Batch = a.Batch
		resp.Citations = recordCites(a.Citations)
	case sf.Clarify != nil:
		resp.Answer = sf.Clarify.Question
	case sf.Proposal != nil:
		resp.Answer, resp.ConfirmationRequired, resp.Proposal = sf.Proposal.Summary, true, sf.Proposal
	case sf.Error != nil:
		status := turnErrorStatus(sf.Error.Code)
		if status == http.StatusTooManyRequests {
			// A tool's rate limit says how long; other limits pass soon.
			w.Header().Set("Retry-After", strconv.Itoa(max(sf.Error.RetryAfter, 1)))
		}
		writeJSONError(w, status, sf.Error.Code, sf.Error.Message)
		return
	default:
		writeJSONError(w, http.StatusBadGateway, "bad_gateway", "the answer could not be read")
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// lastEnd is the frame among frames that ended their turn, or nil.
func lastEnd(frames []*outFrame) *outFrame {
	for i := len(frames) - 1; i >= 0; i-- {
		if endsTurn(frames[i].typ) {
			return frames[i]
		}
	}
	return nil
}

// refusedEdit reports whether end, the frame that ended confirm turn t,
// refused an edit's arguments: the proposal still waits, so that turn
// decided nothing.
func refusedEdit(t contracts.UserTurn, end *outFrame) bool {
	if t.Confirm == nil || t.Confirm.Decision != "edit" || end.typ != contracts.FrameError {
		return false
	}
	var sf contracts.ServerFrame
	return json.Unmarshal(end.data, &sf) == nil && sf.Error != nil && sf.Error.Code == contracts.CodeInvalidArgs
}

// turnErrorStatus maps the code of a turn that ended in error to a status.
func turnErrorStatus(code string) int {
	switch code {
	case contracts.CodeForbidden:
		return http.StatusForbidden
	case contracts.CodeRateLimited, contracts.CodeLimit:
		return http.StatusTooManyRequests
	case contracts.CodeProposalInvalid, contracts.CodeProposalExpired, contracts.CodeNotConfirmed, contracts.CodeNotFound:
		return http.StatusConflict
	case contracts.CodeInvalidArgs, contracts.CodeBadInput:
		return http.StatusUnprocessableEntity
	case contracts.CodeTimeout:
		return http.StatusGatewayTimeout
	}
	return http.StatusBadGateway
}

// streamTurn writes the turn's frames as server-sent events, starting with
// the ack, until a frame ends the turn, the time is up or the client goes.
func (in *Ingress) streamTurn(ctx context.Context, w http.ResponseWriter, t contracts.UserTurn, frames <-chan *outFrame, up *uploaded) {
	flusher, _ := w.(http.Flusher)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(f *outFrame) bool {
		var data bytes.Buffer
		if err := json.Compact(&data, f.data); err != nil {
			return true // not JSON: skip it
		}
		if _, err := io.WriteString(w, "event: "+f.typ+"\ndata: "+data.String()+"\n\n"); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		in.metrics.wrote(f, in.now())
		return true
	}
	frame := func(sf contracts.ServerFrame) *outFrame {
		b, _ := json.Marshal(sf)
		return &outFrame{data: b, typ: sf.Type}
	}
	if !send(frame(contracts.ServerFrame{Type: contracts.FrameAck, ConversationID: t.ConversationID, TurnID: t.TurnID, At: in.now()})) {
		return
	}
	if up != nil {
		// The file is stored: the reading starts.
		b, _ := json.Marshal(up)
		if !send(&outFrame{data: b, typ: "uploaded"}) {
			return
		}
	}
	for {
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				send(frame(contracts.ServerFrame{Type: contracts.FrameError, ConversationID: t.ConversationID, TurnID: t.TurnID, At: in.now(),
					Error: &contracts.ErrorBody{Code: contracts.CodeTimeout, Message: "no answer in time; the turn may still finish and reach your open sockets"}}))
			}
			return
		case f := <-frames:
			if !send(f) {
				return
			}
			if endsTurn(f.typ) {
				// The stream's last event says the turn is over.
				done, _ := json.Marshal(map[string]string{"turn_id": t.TurnID, "conversation_id": t.ConversationID, "ended_by": f.typ})
				_, _ = io.WriteString(w, "event: done\ndata: "+string(done)+"\n\n")
				if flusher != nil {
					flusher.Flush()
				}
				return
			}
		}
	}
}
