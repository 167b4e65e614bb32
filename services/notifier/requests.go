package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The notifier answers core NATS requests on bus.NotifierSubject: the
// ingress, which keeps no database, reads catch-up frames and the inbox
// through them, as contracts.InboxRequest and contracts.InboxReply.

const queueGroup = "notifier"

// Page sizes of catch-up replies.
const (
	DefaultResumeLimit = 200
	MaxResumeLimit     = 1000
	// maxReplyBytes keeps a reply well under NATS's default 1 MiB payload
	// limit; a page ends early (More set) when it would pass it.
	maxReplyBytes = 512 << 10
)

// requestTimeout bounds the store work of one request.
const requestTimeout = 10 * time.Second

// maxAnswering is how many requests one replica answers at once. Each
// request runs in a goroutine of its own (a user message waits on two
// commits and a publish, and a few workers would queue every user behind
// them); past the bound the subscription's callback waits, so requests
// queue in NATS's pending buffer and other replicas take their share.
const maxAnswering = 256

// Responder answers the notifier's requests. Close unsubscribes and waits
// for the requests being answered.
type Responder struct {
	subs  []*nats.Subscription
	slots chan struct{}
	wg    sync.WaitGroup
}

// Respond subscribes to the request subjects on nc. The caller keeps
// owning nc.
func (n *Notifier) Respond(nc *nats.Conn) (*Responder, error) {
	r := &Responder{slots: make(chan struct{}, maxAnswering)}
	for _, op := range bus.NotifierOps {
		sub, err := nc.QueueSubscribe(bus.NotifierWildcard(op), queueGroup, func(m *nats.Msg) {
			r.slots <- struct{}{}
			r.wg.Add(1)
			go func() {
				defer func() { <-r.slots; r.wg.Done() }()
				n.answer(op, m)
			}()
		})
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("subscribe %s requests: %w", op, err)
		}
		// The slots bound the work; the pending buffer only holds
		// requests waiting for one.
		_ = sub.SetPendingLimits(64<<10, 64<<20)
		r.subs = append(r.subs, sub)
	}
	if err := nc.Flush(); err != nil {
		r.Close()
		return nil, fmt.Errorf("subscribe requests: %w", err)
	}
	return r, nil
}

// Close stops answering and waits for the requests being answered.
func (r *Responder) Close() {
	for _, s := range r.subs {
		_ = s.Unsubscribe()
	}
	r.wg.Wait()
}

func (n *Notifier) answer(op string, m *nats.Msg) {
	if m.Reply == "" {
		return
	}
	reply := n.reply(op, m)
	b, err := json.Marshal(reply)
	if err != nil {
		b, _ = json.Marshal(contracts.InboxReply{Error: &contracts.InboxError{Code: contracts.InboxUnavailable, Message: "could not encode the reply"}})
	}
	_ = m.Respond(b)
}

func (n *Notifier) reply(op string, m *nats.Msg) contracts.InboxReply {
	// purser.notifier.<op>.<tenant>.<user>; the wildcard matched two tokens.
	tokens, err := splitTokens(m.Subject, strings.TrimSuffix(bus.NotifierWildcard(op), "*.*"), 2)
	if err != nil {
		return badRequest("subject: " + err.Error())
	}
	tenant, user := tokens[0], tokens[1]
	var req contracts.InboxRequest
	if len(m.Data) > 0 {
		if err := contracts.Decode(m.Data, &req); err != nil {
			return badRequest(err.Error())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	switch op {
	case bus.NotifierResume:
		return n.resume(ctx, tenant, user, req)
	case bus.NotifierNotifications:
		return n.notifications(ctx, tenant, user, req)
	case bus.NotifierRead:
		return n.markRead(ctx, tenant, user, req)
	case bus.NotifierTurn:
		return n.turnFrames(ctx, tenant, user, req)
	case bus.NotifierAudit:
		return n.audit(ctx, tenant, req)
	case bus.NotifierMatch:
		return n.match(ctx, tenant, user, req)
	case bus.NotifierUserMessage:
		return n.userMessage(ctx, tenant, user, req)
	case bus.NotifierConversations:
		return n.conversations(ctx, tenant, user, req)
	case bus.NotifierHistory:
		return n.history(ctx, tenant, user, req)
	}
	return badRequest("unknown request")
}

// resume returns one page of the user's stored frames after req.AfterSeq,
// each with its seq set.
func (n *Notifier) resume(ctx context.Context, tenant, user string, req contracts.InboxRequest) contracts.InboxReply {
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultResumeLimit
	}
	limit = min(limit, MaxResumeLimit)
	// One more than asked says whether another page follows.
	stored, err := n.store.FramesAfter(ctx, tenant, user, req.AfterSeq, limit+1)
	if err != nil {
		n.log.Error("resume: read frames", "tenant", tenant, "err", err)
		return unavailable()
	}
	out := contracts.InboxReply{More: len(stored) > limit}
	size := 0
	for i, f := range stored[:min(len(stored), limit)] {
		var frame contracts.ServerFrame
		if err := json.Unmarshal(f.Payload, &frame); err != nil {
			n.log.Error("resume: stored frame unreadable", "tenant", tenant, "seq", f.Seq, "err", err)
			continue
		}
		frame.Seq = f.Seq
		n.withOutcome(ctx, tenant, &frame)
		b, err := json.Marshal(frame)
		if err != nil {
			continue
		}
		if i > 0 && size+len(b) > maxReplyBytes {
			out.More = true
			break
		}
		size += len(b)
		out.Frames = append(out.Frames, b)
	}
	return out
}

// turnFramesMax bounds the frames the turn op returns (a turn has a
// handful: its message, tool steps and its outcome).
const turnFramesMax = 200

// turnFrames returns the user's stored frames of turn req.TurnID, each
// with its seq, so that a repeated message or confirm can be answered
// with the outcome the first one had.
func (n *Notifier) turnFrames(ctx context.Context, tenant, user string, req contracts.InboxRequest) contracts.InboxReply {
	if req.TurnID == "" {
		return badRequest("turn_id: is required")
	}
	stored, err := n.store.FramesOfTurn(ctx, tenant, user, req.TurnID, turnFramesMax)
	if err != nil {
		n.log.Error("turn: read frames", "tenant", tenant, "err", err)
		return unavailable()
	}
	var out contracts.InboxReply
	out.Frames = n.withSeqs(ctx, tenant, stored)
	return out
}

// audit returns the tenant's latest audit entries. Only the ingress asks,
// and only for an owner (bus permissions keep other publishers off
// purser.notifier.>).
func (n *Notifier) audit(ctx context.Context, tenant string, req contracts.InboxRequest) contracts.InboxReply {
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	entries, err := n.store.ListAudit(ctx, tenant, min(limit, 200))
	if err != nil {
		n.log.Error("audit: list", "tenant", tenant, "err", err)
		return unavailable()
	}
	out := contracts.InboxReply{Audit: make([]contracts.AuditEntry, 0, len(entries))}
	for _, e := range entries {
		out.Audit = append(out.Audit, contracts.AuditEntry{ID: e.ID, UserID: e.UserID, Tool: e.Tool, CallID: e.CallID, Outcome: e.Outcome,
			Args: e.Args, DurationMS: e.DurationMS, CreatedAt: e.CreatedAt.UTC()})
	}
	return out
}

// match finds the one pending proposal of the user's conversation whose
// tool and canonical arguments equal the request's: the original chat
// contract confirmed a call by restating it. None, or more than one, is a
// conflict.
func (n *Notifier) match(ctx context.Context, tenant, user string, req contracts.InboxRequest) contracts.InboxReply {
	conflict := func(msg string) contracts.InboxReply {
		return contracts.InboxReply{Error: &contracts.InboxError{Code: contracts.InboxConflict, Message: msg}}
	}
	spec, ok := contracts.LookupTool(req.Tool)
	if req.ConversationID == "" || !ok {
		return badRequest("conversation_id and a known tool are required")
	}
	want, err := spec.CanonicalArgs(req.Args)
	if err != nil {
		return badRequest("args: " + err.Error())
	}
	pending, err := n.store.PendingProposals(ctx, tenant, user, req.ConversationID, n.now(), 50)
	if err != nil {
		n.log.Error("match: pending proposals", "tenant", tenant, "err", err)
		return unavailable()
	}
	var found []string
	for _, p := range pending {
		if p.Tool != req.Tool {
			continue
		}
		if got, err := spec.CanonicalArgs(p.Args); err == nil && string(got) == string(want) {
			found = append(found, p.ID)
		}
	}
	switch len(found) {
	case 0:
		return conflict("no pending proposal matches that tool and those arguments")
	case 1:
		return contracts.InboxReply{ProposalID: found[0]}
	}
	return conflict("more than one pending proposal matches; confirm by proposal_id")
}

// userMessage stores what the user wrote as a frame of its conversation
// and delivers it to all the user's sockets, so every device shows both
// sides; the first message of a conversation titles it. The turn id makes
// it idempotent: the same message again keeps its first seq.
func (n *Notifier) userMessage(ctx context.Context, tenant, user string, req contracts.InboxRequest) contracts.InboxReply {
	if req.TurnID == "" || req.ConversationID == "" || req.Text == "" {
		return badRequest("turn_id, conversation_id and text are required")
	}
	frame := contracts.ServerFrame{Type: contracts.FrameUserMessage, ConversationID: req.ConversationID, TurnID: req.TurnID,
		At: n.now().UTC(), UserMessage: &contracts.UserMessage{ID: req.ID, Text: req.Text}}
	event := message.NewMessage("um-"+req.TurnID, nil)
	event.SetContext(ctx)
	event.Metadata.Set(bus.HeaderCorrelation, req.TurnID)
	event.Metadata.Set(bus.HeaderCreatedAt, frame.At.Format(time.RFC3339Nano))
	created, err := n.deliver(event, tenant, user, frame, title(req.Text))
	if err != nil {
		n.log.Error("user message: deliver", "tenant", tenant, "err", err)
		return unavailable()
	}
	return contracts.InboxReply{Seen: !created}
}

// title is a conversation's title: its first message's first words.
func title(text string) string {
	t := strings.Join(strings.Fields(text), " ")
	if r := []rune(t); len(r) > 60 {
		t = strings.TrimSpace(string(r[:59])) + "…"
	}
	return t
}

// conversations lists the user's conversations, the latest used first.
func (n *Notifier) conversations(ctx context.Context, tenant, user string, req contracts.InboxRequest) contracts.InboxReply {
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	list, err := n.store.ListConversations(ctx, tenant, user, min(limit, 200))
	if err != nil {
		n.log.Error("list conversations", "tenant", tenant, "err", err)
		return unavailable()
	}
	out := contracts.InboxReply{Conversations: make([]contracts.ConversationSummary, 0, len(list))}
	for _, c := range list {
		out.Conversations = append(out.Conversations, contracts.ConversationSummary{ID: c.ConversationID, Title: c.Title,
			CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()})
	}
	return out
}

// history returns one page of a conversation's frames before req.BeforeSeq
// (the newest when 0), oldest first, each with its seq; More says older
// frames remain.
func (n *Notifier) history(ctx context.Context, tenant, user string, req contracts.InboxRequest) contracts.InboxReply {
	if req.ConversationID == "" {
		return badRequest("conversation_id: is required")
	}
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, MaxResumeLimit)
	stored, err := n.store.ConversationFrames(ctx, tenant, user, req.ConversationID, req.BeforeSeq, limit+1)
	if err != nil {
		n.log.Error("history: read frames", "tenant", tenant, "err", err)
		return unavailable()
	}
	out := contracts.InboxReply{More: len(stored) > limit}
	if out.More {
		stored = stored[1:]
	}
	out.Frames = n.withSeqs(ctx, tenant, stored)
	return out
}

func (n *Notifier) notifications(ctx context.Context, tenant, user string, req contracts.InboxRequest) contracts.InboxReply {
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	list, err := n.store.ListNotifications(ctx, tenant, user, req.Unread, min(limit, 200))
	if err != nil {
		n.log.Error("list notifications", "tenant", tenant, "err", err)
		return unavailable()
	}
	out := contracts.InboxReply{Notifications: make([]contracts.Notification, 0, len(list))}
	for _, s := range list {
		out.Notifications = append(out.Notifications, contracts.Notification{
			ID: s.ID, Kind: s.Kind, Title: s.Title, Body: s.Body, Data: s.Data, CreatedAt: s.CreatedAt.UTC(), Read: s.ReadAt != nil,
		})
	}
	return out
}

func (n *Notifier) markRead(ctx context.Context, tenant, user string, req contracts.InboxRequest) contracts.InboxReply {
	if req.ID == "" {
		return badRequest("id: is required")
	}
	err := n.store.MarkNotificationRead(ctx, tenant, user, req.ID, n.now().UTC())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return contracts.InboxReply{Error: &contracts.InboxError{Code: contracts.InboxNotFound, Message: "no such notification"}}
	case err != nil:
		n.log.Error("mark notification read", "tenant", tenant, "err", err)
		return unavailable()
	}
	return contracts.InboxReply{}
}

func badRequest(msg string) contracts.InboxReply {
	return contracts.InboxReply{Error: &contracts.InboxError{Code: contracts.InboxBadRequest, Message: msg}}
}

func unavailable() contracts.InboxReply {
	return contracts.InboxReply{Error: &contracts.InboxError{Code: contracts.InboxUnavailable, Message: "the inbox is unavailable; retry"}}
}

// withSeqs encodes stored frames with their seqs, leaving out any that
// cannot be read.
func (n *Notifier) withSeqs(ctx context.Context, tenant string, stored []store.Frame) []json.RawMessage {
	var out []json.RawMessage
	for _, f := range stored {
		var frame contracts.ServerFrame
		if err := json.Unmarshal(f.Payload, &frame); err != nil {
			continue
		}
		frame.Seq = f.Seq
		n.withOutcome(ctx, tenant, &frame)
		if b, err := json.Marshal(frame); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// withOutcome sets a replayed proposal's status once it is no longer
// pending, so that a client rebuilding its transcript (another device, a
// reload) shows the decision instead of buttons that would be refused.
// The store unreadable leaves the frame as it was stored.
func (n *Notifier) withOutcome(ctx context.Context, tenant string, f *contracts.ServerFrame) {
	if f.Type != contracts.FrameProposal || f.Proposal == nil {
		return
	}
	p, err := n.store.GetProposal(ctx, tenant, f.Proposal.ProposalID)
	if err != nil {
		return
	}
	status := p.Status
	if status == store.ProposalPending && !p.ExpiresAt.After(n.now()) {
		status = store.ProposalExpired
	}
	if status != store.ProposalPending {
		f.Proposal.Status = status
	}
}
