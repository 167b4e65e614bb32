package ingress

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// recordUserMessage asks the notifier to store what the user wrote in
// turn t (clientID is their client's message id) as a user_message frame
// of its conversation and deliver it to all their sockets. It is asked
// before the turn is published, so the message's seq comes before its
// answer's.
//
// seen says the message was stored before: the same turn was sent before.
// JetStream's duplicate check says so too, but not after a NATS restart
// once the turn was consumed (a work-queue stream keeps no message to
// rebuild its window from), and then the turn would be skipped as done
// with nothing sent back.
func (in *Ingress) recordUserMessage(ctx context.Context, t contracts.UserTurn, clientID string) (seen bool, err error) {
	reply, err := ask(ctx, in, bus.NotifierUserMessage(), t.TenantID, t.UserID,
		contracts.UserMessageRequest{TurnID: t.TurnID, ConversationID: t.ConversationID, ID: clientID, Text: t.Text, Upload: t.Upload})
	if err != nil {
		return false, err
	}
	return reply.Seen, nil
}

// msgNotQueued tells a client its message was not queued and is worth
// sending again.
const msgNotQueued = "the message could not be queued; please retry"

// seenBefore tells whether turn t was sent before, before it is published:
// a message by its stored user message (recorded now if new), a decision
// by its stored outcome (returned in frames, nil unless seen), whether the
// client named it or not. It is asked before publishing, never after: a
// decision's outcome may be stored by the time a later look would run,
// and its frames would then reach the socket twice, live and again.
// A turn that is not valid is refused here with its
// *contracts.ValidationError, so that publishTurn need not check it again.
// Any other error means the notifier could not say (it is retried
// briefly): the turn must not be published then, or a resent turn that
// JetStream forgot would be acked and never answered.
func (in *Ingress) seenBefore(ctx context.Context, t contracts.UserTurn, clientID string) (seen bool, frames []*outFrame, err error) {
	if err := contracts.Validate(&t); err != nil {
		return false, nil, err
	}
	for attempt := 0; ; attempt++ {
		switch {
		case t.Text != "" || t.Upload != nil:
			seen, err = in.recordUserMessage(ctx, t, clientID)
		case clientID != "" || t.Confirm != nil:
			var end *outFrame
			if frames, end, err = in.storedOutcome(ctx, t); end == nil {
				frames = nil // not decided before: its frames, if any, come live
			}
			seen = end != nil
		default:
			return false, nil, nil
		}
		if err == nil || attempt == 2 || !errors.Is(err, errNotifierUnavailable) {
			if err != nil {
				in.log.Warn("turn not published: the notifier cannot say whether it was sent before", "tenant", t.TenantID, "turn", t.TurnID, "err", err)
			}
			return seen, frames, err
		}
		select { // the notifier may be reconnecting
		case <-ctx.Done():
			return false, nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// conversations answers a conversations frame with the person's
// conversations, as GET /v1/conversations does.
func (c *client) conversations(ctx context.Context, f *contracts.ConversationsFrame) {
	limit := f.Limit
	if limit == 0 {
		limit = 50
	}
	reply, err := ask(ctx, c.in, bus.NotifierConversations(), c.tenant, c.user, contracts.ConversationsRequest{Limit: limit})
	if err != nil {
		c.sendError(f.ID, contracts.ErrCodeUnavailable, "your conversations cannot be listed right now; try again")
		return
	}
	list := &contracts.ConversationList{ID: f.ID, Items: reply.Conversations}
	if list.Items == nil {
		list.Items = []contracts.ConversationSummary{}
	}
	c.sendFrame(contracts.ServerFrame{Type: contracts.FrameConversations, At: c.in.now(), Conversations: list})
}

type conversationList struct {
	Conversations []contracts.ConversationSummary `json:"conversations"`
}

type newConversation struct {
	ID string `json:"id"`
}

type historyPage struct {
	Frames []json.RawMessage `json:"frames"`
	More   bool              `json:"more"`
}

// serveConversations is GET /v1/conversations (the caller's conversations,
// the latest used first) and POST /v1/conversations (a fresh conversation
// id to start a new one).
func (in *Ingress) serveConversations(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		in.api("conversations", http.MethodPost, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
			writeJSON(w, http.StatusCreated, newConversation{ID: "c" + in.newID()})
		})
		return
	}
	in.api("conversations", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		limit, ok := limitParam(w, r, 50)
		if !ok {
			return
		}
		reply, err := ask(r.Context(), in, bus.NotifierConversations(), p.TenantID, p.UserID, contracts.ConversationsRequest{Limit: limit})
		if err != nil {
			in.notifierFailed(w, err)
			return
		}
		list := conversationList{Conversations: reply.Conversations}
		if list.Conversations == nil {
			list.Conversations = []contracts.ConversationSummary{}
		}
		writeJSON(w, http.StatusOK, list)
	})
}

// serveHistory is GET /v1/conversations/{id}/frames?before_seq=N&limit=M:
// one page of the conversation's frames before seq N (the newest when
// absent), oldest first, so a client loads older history as the user
// scrolls back. Conversations are the caller's own: another user's of the
// same id answers an empty page, as an id never used does.
func (in *Ingress) serveHistory(w http.ResponseWriter, r *http.Request) {
	in.api("history", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		conv := r.PathValue("id")
		if !contracts.ValidID(conv) {
			writeJSONError(w, http.StatusBadRequest, "bad_request", "conversation id: must be 1-64 letters, digits, '_' or '-'")
			return
		}
		limit, ok := limitParam(w, r, 50)
		if !ok {
			return
		}
		var before int64
		if s := r.URL.Query().Get("before_seq"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 1 {
				writeJSONError(w, http.StatusBadRequest, "bad_request", "before_seq: must be a positive number")
				return
			}
			before = n
		}
		reply, err := ask(r.Context(), in, bus.NotifierHistory(), p.TenantID, p.UserID,
			contracts.HistoryRequest{ConversationID: conv, BeforeSeq: before, Limit: limit})
		if err != nil {
			in.notifierFailed(w, err)
			return
		}
		page := historyPage{Frames: reply.Frames, More: reply.More}
		if page.Frames == nil {
			page.Frames = []json.RawMessage{}
		}
		writeJSON(w, http.StatusOK, page)
	})
}

// limitParam reads ?limit= (1..maxListLimit, default def), answering 400
// itself when it is bad.
func limitParam(w http.ResponseWriter, r *http.Request, def int) (int, bool) {
	s := r.URL.Query().Get("limit")
	if s == "" {
		return def, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > maxListLimit {
		writeJSONError(w, http.StatusBadRequest, "bad_request", "limit: must be a number from 1 to "+strconv.Itoa(maxListLimit))
		return 0, false
	}
	return n, true
}
