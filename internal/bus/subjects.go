package bus

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ThreeDotsLabs/watermill/message"

	"github.com/purser-ai/purser/pkg/contracts"
)

// ValidToken reports whether s may be used as one subject token: the
// shape of contracts' ids.
func ValidToken(s string) bool { return contracts.ValidID(s) }

func subject(prefix string, names []string, tokens ...string) (string, error) {
	for i, t := range tokens {
		if !ValidToken(t) {
			return "", fmt.Errorf("%s: must be 1-64 letters, digits, '_' or '-'", names[i])
		}
	}
	return prefix + "." + strings.Join(tokens, "."), nil
}

// TurnSubject is purser.turns.<tenant>.<conversation>.
func TurnSubject(tenant, conversation string) (string, error) {
	return subject("purser.turns", []string{"tenant", "conversation"}, tenant, conversation)
}

// AgentSubject is purser.agent.<tenant>.<user>.<conversation>.
func AgentSubject(tenant, user, conversation string) (string, error) {
	return subject("purser.agent", []string{"tenant", "user", "conversation"}, tenant, user, conversation)
}

// ToolRequestSubject is purser.tool.request.<tool>.
func ToolRequestSubject(tool string) (string, error) {
	return subject("purser.tool.request", []string{"tool"}, tool)
}

// ImportSubject is purser.import.<tenant>.<user>: statement import jobs.
func ImportSubject(tenant, user string) (string, error) {
	return subject("purser.import", []string{"tenant", "user"}, tenant, user)
}

// ToolResultSubject is purser.tool.result.<tenant>.<conversation>. The
// conversation is its user's, whom the message's Purser-User header names
// (two users may use one conversation id; they then share the subject).
func ToolResultSubject(tenant, conversation string) (string, error) {
	return subject("purser.tool.result", []string{"tenant", "conversation"}, tenant, conversation)
}

// NotifySubject is purser.notify.<tenant>.<user>.
func NotifySubject(tenant, user string) (string, error) {
	return subject("purser.notify", []string{"tenant", "user"}, tenant, user)
}

// DeliverSubject is purser.deliver.<tenant>.<user>, on core NATS.
func DeliverSubject(tenant, user string) (string, error) {
	return subject("purser.deliver", []string{"tenant", "user"}, tenant, user)
}

// DLQSubject is purser.dlq.<service>.
func DLQSubject(service string) (string, error) {
	return subject("purser.dlq", []string{"service"}, service)
}

// NotifierCall is one request the notifier answers on core NATS, on
// purser.notifier.<Op>.<tenant>.<user>, with its request and reply types:
// the ingress asks and the notifier answers through the same value, so the
// two cannot disagree on what a subject carries. Tenant and user come from
// the subject, which only the ingress names, after authentication.
type NotifierCall[Req, Rep any] struct {
	// Op is the subject's third token.
	Op string
}

// Subject is purser.notifier.<op>.<tenant>.<user>.
func (c NotifierCall[Req, Rep]) Subject(tenant, user string) (string, error) {
	return NotifierSubject(c.Op, tenant, user)
}

// Wildcard is purser.notifier.<op>.*.*, what the notifier serves.
func (c NotifierCall[Req, Rep]) Wildcard() string { return "purser.notifier." + c.Op + ".*.*" }

// Parse reads the tenant and user of one of this call's subjects.
func (c NotifierCall[Req, Rep]) Parse(subject string) (tenant, user string, err error) {
	return ParseNotifierSubject(c.Op, subject)
}

// The requests the notifier answers: the ingress, which keeps no
// database, reads catch-up frames, turns, history and the inbox through
// them, and has the user's own messages stored.

// NotifierResume asks for a page of stored frames after a seq.
func NotifierResume() NotifierCall[contracts.ResumeRequest, contracts.ResumeReply] {
	return NotifierCall[contracts.ResumeRequest, contracts.ResumeReply]{Op: "resume"}
}

// NotifierNotifications lists the inbox.
func NotifierNotifications() NotifierCall[contracts.NotificationsRequest, contracts.NotificationsReply] {
	return NotifierCall[contracts.NotificationsRequest, contracts.NotificationsReply]{Op: "notifications"}
}

// NotifierMarkRead marks one notification read.
func NotifierMarkRead() NotifierCall[contracts.MarkReadRequest, contracts.MarkReadReply] {
	return NotifierCall[contracts.MarkReadRequest, contracts.MarkReadReply]{Op: "read"}
}

// NotifierTurnFrames asks for the stored frames of one turn.
func NotifierTurnFrames() NotifierCall[contracts.TurnFramesRequest, contracts.TurnFramesReply] {
	return NotifierCall[contracts.TurnFramesRequest, contracts.TurnFramesReply]{Op: "turn"}
}

// NotifierAudit asks for the tenant's audit log.
func NotifierAudit() NotifierCall[contracts.AuditRequest, contracts.AuditReply] {
	return NotifierCall[contracts.AuditRequest, contracts.AuditReply]{Op: "audit"}
}

// NotifierMatch finds the pending proposal that restates a call.
func NotifierMatch() NotifierCall[contracts.MatchRequest, contracts.MatchReply] {
	return NotifierCall[contracts.MatchRequest, contracts.MatchReply]{Op: "match"}
}

// NotifierUserMessage stores and delivers the user's own message.
func NotifierUserMessage() NotifierCall[contracts.UserMessageRequest, contracts.UserMessageReply] {
	return NotifierCall[contracts.UserMessageRequest, contracts.UserMessageReply]{Op: "user_message"}
}

// NotifierConversations lists the user's conversations.
func NotifierConversations() NotifierCall[contracts.ConversationsRequest, contracts.ConversationsReply] {
	return NotifierCall[contracts.ConversationsRequest, contracts.ConversationsReply]{Op: "conversations"}
}

// NotifierHistory asks for a page of one conversation's frames.
func NotifierHistory() NotifierCall[contracts.HistoryRequest, contracts.HistoryReply] {
	return NotifierCall[contracts.HistoryRequest, contracts.HistoryReply]{Op: "history"}
}

// NotifierLedger asks for a page of the user's ledger.
func NotifierLedger() NotifierCall[contracts.LedgerRequest, contracts.LedgerReply] {
	return NotifierCall[contracts.LedgerRequest, contracts.LedgerReply]{Op: "ledger"}
}

// NotifierLedgerSummary adds up the user's ledger over a date range.
func NotifierLedgerSummary() NotifierCall[contracts.LedgerSummaryRequest, contracts.LedgerSummaryReply] {
	return NotifierCall[contracts.LedgerSummaryRequest, contracts.LedgerSummaryReply]{Op: "ledger_summary"}
}

// NotifierSearch searches the user's own records (GET /v1/search).
func NotifierSearch() NotifierCall[contracts.SearchRequest, contracts.SearchReply] {
	return NotifierCall[contracts.SearchRequest, contracts.SearchReply]{Op: "search"}
}

// NotifierRecord reads one of the user's own records a citation names
// (GET /v1/ledger/entries/{id}, GET /v1/documents/{id}).
func NotifierRecord() NotifierCall[contracts.RecordRequest, contracts.RecordReply] {
	return NotifierCall[contracts.RecordRequest, contracts.RecordReply]{Op: "record"}
}

// NotifierSubject is purser.notifier.<op>.<tenant>.<user>, on core NATS.
func NotifierSubject(op, tenant, user string) (string, error) {
	return subject("purser.notifier", []string{"op", "tenant", "user"}, op, tenant, user)
}

// CheckIdentity refuses, as a permanent error, a message whose subject is
// not the one its payload's identity maps to (want, from one of the
// *Subject functions), or whose Purser-Tenant, Purser-User or
// Purser-Conversation headers contradict the payload. A consumer calls it
// after decoding, so that a message published on one tenant's subject can
// never act for another.
func CheckIdentity(msg *message.Message, want string, wantErr error, tenant, user, conversation string) error {
	if wantErr != nil {
		return Permanent(fmt.Errorf("identity: %w", wantErr))
	}
	if got := logicalSubject(msg.Metadata.Get(MetaSubject)); got != want {
		return Permanent(fmt.Errorf("identity: subject %q does not match the payload's %q", got, want))
	}
	for _, h := range []struct{ name, want string }{
		{HeaderTenant, tenant}, {HeaderUser, user}, {HeaderConversation, conversation},
	} {
		if got := msg.Metadata.Get(h.name); got != "" && h.want != "" && got != h.want {
			return Permanent(fmt.Errorf("identity: header %s %q does not match the payload's %q", h.name, got, h.want))
		}
	}
	return nil
}

// logicalSubject is the subject a message was published on: TURNS stores
// purser.turns.<tenant>.<conversation> as purser.turns.<lane>.<tenant>.<conversation>.
func logicalSubject(stored string) string {
	tokens := strings.Split(stored, ".")
	if len(tokens) == 5 && tokens[0] == "purser" && tokens[1] == "turns" {
		if _, err := strconv.Atoi(tokens[2]); err == nil {
			return strings.Join([]string{"purser", "turns", tokens[3], tokens[4]}, ".")
		}
	}
	return stored
}

// MailSubject is purser.mail.<op>.<tenant>.<user>, on core NATS: the
// ingress asks the toolrunner, which holds the OAuth client and the key
// that seals tokens, to connect, report or disconnect a user's Gmail.
// Tenant and user come from the subject, which only the ingress names.
func MailSubject(op, tenant, user string) (string, error) {
	return subject("purser.mail", []string{"op", "tenant", "user"}, op, tenant, user)
}

// MailWildcard is purser.mail.*.*.*, what the toolrunner answers.
func MailWildcard() string { return "purser.mail.*.*.*" }

// parse returns the validated tokens of subject after prefix, exactly
// len(names) of them; the error names what was wrong.
func parse(subject, prefix string, names ...string) ([]string, error) {
	rest, ok := strings.CutPrefix(subject, prefix+".")
	if !ok {
		return nil, fmt.Errorf("subject %q is not under %s", subject, prefix)
	}
	tokens := strings.Split(rest, ".")
	if len(tokens) != len(names) {
		return nil, fmt.Errorf("subject %q: want %d tokens after %s", subject, len(names), prefix)
	}
	for i, t := range tokens {
		if !ValidToken(t) {
			return nil, fmt.Errorf("subject %q: bad %s", subject, names[i])
		}
	}
	return tokens, nil
}

// ParseToolResultSubject reads purser.tool.result.<tenant>.<conversation>.
func ParseToolResultSubject(subject string) (tenant, conversation string, err error) {
	t, err := parse(subject, "purser.tool.result", "tenant", "conversation")
	if err != nil {
		return "", "", err
	}
	return t[0], t[1], nil
}

// ParseAgentSubject reads purser.agent.<tenant>.<user>.<conversation>.
func ParseAgentSubject(subject string) (tenant, user, conversation string, err error) {
	t, err := parse(subject, "purser.agent", "tenant", "user", "conversation")
	if err != nil {
		return "", "", "", err
	}
	return t[0], t[1], t[2], nil
}

// ParseNotifySubject reads purser.notify.<tenant>.<user>.
func ParseNotifySubject(subject string) (tenant, user string, err error) {
	t, err := parse(subject, "purser.notify", "tenant", "user")
	if err != nil {
		return "", "", err
	}
	return t[0], t[1], nil
}

// ParseNotifierSubject reads purser.notifier.<op>.<tenant>.<user> for one op.
func ParseNotifierSubject(op, subject string) (tenant, user string, err error) {
	t, err := parse(subject, "purser.notifier."+op, "tenant", "user")
	if err != nil {
		return "", "", err
	}
	return t[0], t[1], nil
}

// NotifierSettings reads the user's own settings, and sets the language of
// their answers (GET and PUT /v1/settings).
func NotifierSettings() NotifierCall[contracts.SettingsRequest, contracts.SettingsReply] {
	return NotifierCall[contracts.SettingsRequest, contracts.SettingsReply]{Op: "settings"}
}
