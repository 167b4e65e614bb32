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
	"github.com/purser-ai/purser/internal/warm"
	"github.com/purser-ai/purser/pkg/contracts"
)

// The notifier answers core NATS requests on the subjects of
// bus.NotifierCall, one per operation, each with its own request and reply
// types in pkg/contracts: the ingress, which keeps no database, reads
// catch-up frames and the inbox through them.

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

// endpoint is one request the notifier answers: the subjects it serves
// and how it answers one request on them.
type endpoint struct {
	op       string
	wildcard string
	answer   func(m *nats.Msg) any
}

// serve binds handle to call: the subject names tenant and user, the body
// decodes (unknown fields rejected) and validates into call's request,
// and handle's reply, or its error as an InboxFailure, is the answer. An
// error that is not an *contracts.InboxError is logged and answered as
// unavailable, so no internals reach the ingress.
func serve[Req, Rep any](n *Notifier, call bus.NotifierCall[Req, Rep], handle func(ctx context.Context, tenant, user string, req Req) (Rep, error)) endpoint {
	return endpoint{op: call.Op, wildcard: call.Wildcard(), answer: func(m *nats.Msg) any {
		tenant, user, err := call.Parse(m.Subject)
		if err != nil {
			return contracts.InboxFailure{Error: badRequest("subject: " + err.Error())}
		}
		var req Req
		if len(m.Data) > 0 {
			err = contracts.Decode(m.Data, &req)
		} else {
			err = contracts.Validate(&req)
		}
		if err != nil {
			return contracts.InboxFailure{Error: badRequest(err.Error())}
		}
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		rep, err := handle(ctx, tenant, user, req)
		if err != nil {
			var ie *contracts.InboxError
			if errors.As(err, &ie) {
				return contracts.InboxFailure{Error: ie}
			}
			n.log.Error("notifier request", "op", call.Op, "tenant", tenant, "err", err)
			return unavailable()
		}
		return rep
	}}
}

// endpoints are every request the notifier answers.
func (n *Notifier) endpoints() []endpoint {
	return []endpoint{
		serve(n, bus.NotifierResume(), n.resume),
		serve(n, bus.NotifierNotifications(), n.notifications),
		serve(n, bus.NotifierMarkRead(), n.markRead),
		serve(n, bus.NotifierTurnFrames(), n.turnFrames),
		serve(n, bus.NotifierAudit(), n.audit),
		serve(n, bus.NotifierMatch(), n.match),
		serve(n, bus.NotifierUserMessage(), n.userMessage),
		serve(n, bus.NotifierConversations(), n.conversations),
		serve(n, bus.NotifierHistory(), n.history),
		serve(n, bus.NotifierLedger(), n.ledger),
		serve(n, bus.NotifierLedgerSummary(), n.ledgerSummary),
		serve(n, bus.NotifierSearch(), n.search),
		serve(n, bus.NotifierRecord(), n.record),
		serve(n, bus.NotifierSettings(), n.settings),
	}
}

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
	for _, e := range n.endpoints() {
		sub, err := nc.QueueSubscribe(e.wildcard, queueGroup, func(m *nats.Msg) {
			r.slots <- struct{}{}
			r.wg.Add(1)
			warm.Go(func() {
				defer func() { <-r.slots; r.wg.Done() }()
				answer(e, m)
			})
		})
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("subscribe %s requests: %w", e.op, err)
		}
		// The slots bound the work; the pending buffer only holds
		// requests waiting for one.
		_ = sub.SetPendingLimits(64<<10, 64<<20)
		r.subs = append(r.subs, sub)
	}
	if err := bus.FlushSubscriptions(nc); err != nil {
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

func answer(e endpoint, m *nats.Msg) {
	if m.Reply == "" {
		return
	}
	b, err := json.Marshal(e.answer(m))
	if err != nil {
		b, _ = json.Marshal(contracts.InboxFailure{Error: &contracts.InboxError{Code: contracts.InboxUnavailable, Message: "could not encode the reply"}})
	}
	_ = m.Respond(b)
}

// resume returns one page of the user's stored frames after req.AfterSeq,
// each with its seq set.
func (n *Notifier) resume(ctx context.Context, tenant, user string, req contracts.ResumeRequest) (contracts.ResumeReply, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultResumeLimit
	}
	limit = min(limit, MaxResumeLimit)
	// One more than asked says whether another page follows.
	stored, err := n.store.FramesAfter(ctx, tenant, user, req.AfterSeq, limit+1)
	if err != nil {
		return contracts.ResumeReply{}, fmt.Errorf("read frames: %w", err)
	}
	out := contracts.ResumeReply{More: len(stored) > limit}
	size := 0
	for i, f := range stored[:min(len(stored), limit)] {
		var frame contracts.ServerFrame
		if err := json.Unmarshal(f.Payload, &frame); err != nil {
			n.log.Error("resume: stored frame unreadable", "tenant", tenant, "seq", f.Seq, "err", err)
			continue
		}
		frame.Seq = f.Seq
		n.withOutcome(ctx, tenant, &frame)
		b, err := json.Marshal(&frame)
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
	return out, nil
}

// turnFramesMax bounds the frames the turn op returns (a turn has a
// handful: its message, tool steps and its outcome).
const turnFramesMax = 200

// turnFrames returns the user's stored frames of turn req.TurnID, each
// with its seq, so that a repeated message or confirm can be answered
// with the outcome the first one had.
func (n *Notifier) turnFrames(ctx context.Context, tenant, user string, req contracts.TurnFramesRequest) (contracts.TurnFramesReply, error) {
	stored, err := n.store.FramesOfTurn(ctx, tenant, user, req.TurnID, turnFramesMax)
	if err != nil {
		return contracts.TurnFramesReply{}, fmt.Errorf("read frames of turn: %w", err)
	}
	return contracts.TurnFramesReply{Frames: n.withSeqs(ctx, tenant, stored)}, nil
}

// audit returns the latest audit entries in the request's scope: the
// user's own calls, arguments in full; or, for the tenant scope, every call
// of the tenant with the arguments of other people's calls left out. Only
// the ingress asks (bus permissions keep other publishers off
// purser.notifier.>), and it asks for the tenant scope only for an owner.
func (n *Notifier) audit(ctx context.Context, tenant, user string, req contracts.AuditRequest) (contracts.AuditReply, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 200)
	var entries []store.AuditEntry
	var err error
	if req.Scope == contracts.AuditScopeTenant {
		entries, err = n.store.ListAudit(ctx, tenant, limit)
	} else {
		entries, err = n.store.ListUserAudit(ctx, tenant, user, limit)
	}
	if err != nil {
		return contracts.AuditReply{}, fmt.Errorf("list audit: %w", err)
	}
	out := contracts.AuditReply{Audit: make([]contracts.AuditEntry, 0, len(entries))}
	for _, e := range entries {
		entry := contracts.AuditEntry{ID: e.ID, UserID: e.UserID, Tool: e.Tool, CallID: e.CallID, Outcome: e.Outcome,
			DurationMS: e.DurationMS, CreatedAt: e.CreatedAt.UTC()}
		if e.UserID == user {
			entry.Args = e.Args
		}
		out.Audit = append(out.Audit, entry)
	}
	return out, nil
}

// match finds the one pending proposal of the user's conversation whose
// tool and canonical arguments equal the request's: the original chat
// contract confirmed a call by restating it. None, or more than one, is a
// conflict.
func (n *Notifier) match(ctx context.Context, tenant, user string, req contracts.MatchRequest) (contracts.MatchReply, error) {
	conflict := func(msg string) error {
		return &contracts.InboxError{Code: contracts.InboxConflict, Message: msg}
	}
	spec, ok := contracts.LookupTool(req.Tool)
	if !ok {
		return contracts.MatchReply{}, badRequest("conversation_id and a known tool are required")
	}
	want, err := spec.CanonicalArgs(req.Args)
	if err != nil {
		return contracts.MatchReply{}, badRequest("args: " + err.Error())
	}
	pending, err := n.store.PendingProposals(ctx, tenant, user, req.ConversationID, n.now(), 50)
	if err != nil {
		return contracts.MatchReply{}, fmt.Errorf("pending proposals: %w", err)
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
		return contracts.MatchReply{}, conflict("no pending proposal matches that tool and those arguments")
	case 1:
		return contracts.MatchReply{ProposalID: found[0]}, nil
	}
	return contracts.MatchReply{}, conflict("more than one pending proposal matches; confirm by proposal_id")
}

// userMessage stores what the user wrote as a frame of its conversation
// and delivers it to all the user's sockets, so every device shows both
// sides; the first message of a conversation titles it. The turn id makes
// it idempotent: the same message again keeps its first seq.
func (n *Notifier) userMessage(ctx context.Context, tenant, user string, req contracts.UserMessageRequest) (contracts.UserMessageReply, error) {
	frame := contracts.ServerFrame{Type: contracts.FrameUserMessage, ConversationID: req.ConversationID, TurnID: req.TurnID,
		At: n.now().UTC(), UserMessage: &contracts.UserMessage{ID: req.ID, Text: req.Text, Upload: req.Upload}}
	event := message.NewMessage("um-"+req.TurnID, nil)
	event.SetContext(ctx)
	event.Metadata.Set(bus.HeaderCorrelation, req.TurnID)
	event.Metadata.Set(bus.HeaderCreatedAt, frame.At.Format(time.RFC3339Nano))
	name := req.Text
	if name == "" && req.Upload != nil {
		name = req.Upload.Filename
	}
	created, err := n.deliver(event, tenant, user, frame, title(name))
	if err != nil {
		return contracts.UserMessageReply{}, fmt.Errorf("deliver user message: %w", err)
	}
	return contracts.UserMessageReply{Seen: !created}, nil
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
func (n *Notifier) conversations(ctx context.Context, tenant, user string, req contracts.ConversationsRequest) (contracts.ConversationsReply, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	list, err := n.store.ListConversations(ctx, tenant, user, min(limit, 200))
	if err != nil {
		return contracts.ConversationsReply{}, fmt.Errorf("list conversations: %w", err)
	}
	out := contracts.ConversationsReply{Conversations: make([]contracts.ConversationSummary, 0, len(list))}
	for _, c := range list {
		out.Conversations = append(out.Conversations, contracts.ConversationSummary{ID: c.ConversationID, Title: c.Title,
			CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()})
	}
	return out, nil
}

// history returns one page of a conversation's frames before req.BeforeSeq
// (the newest when 0), oldest first, each with its seq; More says older
// frames remain.
func (n *Notifier) history(ctx context.Context, tenant, user string, req contracts.HistoryRequest) (contracts.HistoryReply, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, MaxResumeLimit)
	stored, err := n.store.ConversationFrames(ctx, tenant, user, req.ConversationID, req.BeforeSeq, limit+1)
	if err != nil {
		return contracts.HistoryReply{}, fmt.Errorf("read conversation frames: %w", err)
	}
	out := contracts.HistoryReply{More: len(stored) > limit}
	if out.More {
		stored = stored[1:]
	}
	out.Frames = n.withSeqs(ctx, tenant, stored)
	return out, nil
}

// notifications lists the user's inbox, newest first.
func (n *Notifier) notifications(ctx context.Context, tenant, user string, req contracts.NotificationsRequest) (contracts.NotificationsReply, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 50
	}
	list, err := n.store.ListNotifications(ctx, tenant, user, req.Unread, min(limit, 200))
	if err != nil {
		return contracts.NotificationsReply{}, fmt.Errorf("list notifications: %w", err)
	}
	out := contracts.NotificationsReply{Notifications: make([]contracts.Notification, 0, len(list))}
	for _, s := range list {
		out.Notifications = append(out.Notifications, contracts.Notification{
			ID: s.ID, Kind: s.Kind, Title: s.Title, Body: s.Body, Data: s.Data, CreatedAt: s.CreatedAt.UTC(), Read: s.ReadAt != nil,
		})
	}
	return out, nil
}

// markRead marks one of the user's notifications read.
func (n *Notifier) markRead(ctx context.Context, tenant, user string, req contracts.MarkReadRequest) (contracts.MarkReadReply, error) {
	err := n.store.MarkNotificationRead(ctx, tenant, user, req.ID, n.now().UTC())
	switch {
	case errors.Is(err, store.ErrNotFound):
		return contracts.MarkReadReply{}, &contracts.InboxError{Code: contracts.InboxNotFound, Message: "no such notification"}
	case err != nil:
		return contracts.MarkReadReply{}, fmt.Errorf("mark notification read: %w", err)
	}
	return contracts.MarkReadReply{}, nil
}

// settings sets the language of the user's answers when asked, then
// reads their settings.
func (n *Notifier) settings(ctx context.Context, tenant, user string, req contracts.SettingsRequest) (contracts.SettingsReply, error) {
	var u store.UserSettings
	var err error
	if req.Language != nil {
		u, err = n.store.PutUserSettings(ctx, store.UserSettings{TenantID: tenant, UserID: user, Language: *req.Language, UpdatedAt: n.now().UTC()})
	} else {
		u, err = n.store.GetUserSettings(ctx, tenant, user)
	}
	if err != nil {
		return contracts.SettingsReply{}, fmt.Errorf("settings: %w", err)
	}
	return contracts.SettingsReply{Language: u.Language, Currency: u.Currency, Timezone: u.Timezone, DateOrder: u.DateOrder}, nil
}

// badRequest is the error of a request the notifier cannot answer as asked.
func badRequest(msg string) *contracts.InboxError {
	return &contracts.InboxError{Code: contracts.InboxBadRequest, Message: msg}
}

// unavailable is the answer when the store failed; the reason is logged,
// not sent.
func unavailable() contracts.InboxFailure {
	return contracts.InboxFailure{Error: &contracts.InboxError{Code: contracts.InboxUnavailable, Message: "the inbox is unavailable; retry"}}
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
		if b, err := json.Marshal(&frame); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// withOutcome sets a replayed proposal's status once it is no longer
// pending, so that a client rebuilding its transcript (another device, a
// reload) shows the decision instead of buttons that would be refused.
// A proposal no longer stored (pruned) shows as expired. The store
// unreadable leaves the frame as it was stored.
func (n *Notifier) withOutcome(ctx context.Context, tenant string, f *contracts.ServerFrame) {
	if f.Type != contracts.FrameProposal || f.Proposal == nil {
		return
	}
	p, err := n.store.GetProposal(ctx, tenant, f.Proposal.ProposalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Pruned: only proposals long past their expiry are, so its
		// buttons would be refused.
		f.Proposal.Status = store.ProposalExpired
		return
	case err != nil:
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
