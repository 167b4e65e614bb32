package toolrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// MailAccounts connects and disconnects users' Gmail; mailbox.Connector
// is the one purser has. Errors a user should read are
// *contracts.MailError; any other error is an outage.
type MailAccounts interface {
	// ConsentURL is where to send the user to grant read access.
	ConsentURL(ctx context.Context, tenant, user string) (string, error)
	// Connect checks state against tenant and user, exchanges code and
	// stores the token.
	Connect(ctx context.Context, tenant, user, code, state string) error
	// Connected reports whether the user has a stored token.
	Connected(ctx context.Context, tenant, user string) (bool, error)
	// Disconnect revokes and deletes the user's token; warning says what
	// could not be done.
	Disconnect(ctx context.Context, tenant, user string) (warning string, err error)
}

// MailNotConfigured answers every mail request with its text as a
// not_configured error: a toolrunner without Gmail says so.
type MailNotConfigured string

var _ MailAccounts = MailNotConfigured("")

func (m MailNotConfigured) err() error {
	return &contracts.MailError{Code: contracts.MailNotConfigured, Message: string(m)}
}

// ConsentURL says Gmail is not configured.
func (m MailNotConfigured) ConsentURL(context.Context, string, string) (string, error) {
	return "", m.err()
}

// Connect says Gmail is not configured.
func (m MailNotConfigured) Connect(context.Context, string, string, string, string) error {
	return m.err()
}

// Connected says Gmail is not configured.
func (m MailNotConfigured) Connected(context.Context, string, string) (bool, error) {
	return false, m.err()
}

// Disconnect says Gmail is not configured.
func (m MailNotConfigured) Disconnect(context.Context, string, string) (string, error) {
	return "", m.err()
}

// mailQueue is the queue group of the toolrunners' mail responders.
const mailQueue = "toolrunner-mail"

// mailWorkers is how many mail requests one replica answers at once (a
// code exchange waits on Google).
const mailWorkers = 4

// mailRequestTimeout bounds the work of one mail request.
const mailRequestTimeout = 15 * time.Second

// MailResponder answers the ingress's mail requests on
// purser.mail.<op>.<tenant>.<user>. Tenant and user come from the subject,
// which only the ingress names after authentication (or, for the callback,
// after matching the state); the state is checked again here, where its key
// is.
type MailResponder struct {
	accounts MailAccounts
	log      *slog.Logger
	subs     []*nats.Subscription
}

// RespondMail subscribes to the mail requests on nc. The caller keeps
// owning nc; Close, or draining nc, stops the answers.
func RespondMail(nc *nats.Conn, accounts MailAccounts, log *slog.Logger) (*MailResponder, error) {
	r := &MailResponder{accounts: accounts, log: log}
	for range mailWorkers {
		sub, err := nc.QueueSubscribe(bus.MailWildcard(), mailQueue, r.answer)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("subscribe mail requests: %w", err)
		}
		r.subs = append(r.subs, sub)
	}
	if err := bus.FlushSubscriptions(nc); err != nil {
		r.Close()
		return nil, fmt.Errorf("subscribe mail requests: %w", err)
	}
	return r, nil
}

// Close stops answering. Requests being answered finish.
func (r *MailResponder) Close() {
	for _, s := range r.subs {
		_ = s.Unsubscribe()
	}
}

func (r *MailResponder) answer(m *nats.Msg) {
	if m.Reply == "" {
		return
	}
	reply := r.reply(m)
	b, err := json.Marshal(reply)
	if err != nil {
		b = []byte(`{"connected":false,"error":{"code":"unavailable","message":"could not encode the reply"}}`)
	}
	_ = m.Respond(b)
}

func mailFailed(code, msg string) contracts.MailReply {
	return contracts.MailReply{Error: &contracts.MailError{Code: code, Message: msg}}
}

func (r *MailResponder) reply(m *nats.Msg) contracts.MailReply {
	// purser.mail.<op>.<tenant>.<user>
	tokens := strings.Split(m.Subject, ".")
	if len(tokens) != 5 {
		return mailFailed(contracts.MailBadRequest, "unexpected subject")
	}
	op, tenant, user := tokens[2], tokens[3], tokens[4]
	if want, err := bus.MailSubject(op, tenant, user); err != nil || want != m.Subject {
		return mailFailed(contracts.MailBadRequest, "unexpected subject")
	}
	var req contracts.MailRequest
	if len(m.Data) > 0 {
		if err := contracts.Decode(m.Data, &req); err != nil {
			return mailFailed(contracts.MailBadRequest, err.Error())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), mailRequestTimeout)
	defer cancel()
	var (
		out contracts.MailReply
		err error
	)
	switch op {
	case contracts.MailOpConnect:
		out.URL, err = r.accounts.ConsentURL(ctx, tenant, user)
	case contracts.MailOpCallback:
		if err = r.accounts.Connect(ctx, tenant, user, req.Code, req.State); err == nil {
			out.Connected = true
		}
	case contracts.MailOpStatus:
		out.Connected, err = r.accounts.Connected(ctx, tenant, user)
	case contracts.MailOpRevoke:
		out.Warning, err = r.accounts.Disconnect(ctx, tenant, user)
	default:
		return mailFailed(contracts.MailBadRequest, "unknown mail request "+op)
	}
	var merr *contracts.MailError
	switch {
	case errors.As(err, &merr):
		return contracts.MailReply{Error: merr}
	case err != nil:
		r.log.Error("mail request", "op", op, "tenant", tenant, "err", err)
		return mailFailed(contracts.MailUnavailable, "Gmail connection is unavailable right now; try again.")
	}
	switch op {
	case contracts.MailOpCallback:
		r.log.Info("gmail connected", "tenant", tenant, "user", user)
	case contracts.MailOpRevoke:
		r.log.Info("gmail disconnected", "tenant", tenant, "user", user, "revoke_failed", out.Warning != "")
	}
	return out
}

// MailDisconnected returns what tells a user, by a Notification on
// purser.notify.<tenant>.<user>, that their Gmail connection broke. The
// message id is built from id, so JetStream drops a second report of the
// same broken token.
func MailDisconnected(pub message.Publisher, now func() time.Time) func(ctx context.Context, tenant, user, id string) error {
	return func(_ context.Context, tenant, user, id string) error {
		subject, err := bus.NotifySubject(tenant, user)
		if err != nil {
			return err
		}
		n := contracts.Notification{ID: id, Kind: contracts.NotifyMailDisconnected, CreatedAt: now().UTC(),
			Title: "Gmail is disconnected",
			Body: "Google no longer accepts purser's access to your Gmail (it was revoked or has expired), so purser cannot search your mail or import statements from it. " +
				"Connect Gmail again on purser's Gmail page (/mail), or with GET /v1/mail/connect.",
			Data: json.RawMessage(`{"page":"/mail","connect":"/v1/mail/connect"}`)}
		if err := contracts.Validate(n); err != nil {
			return err
		}
		payload, err := json.Marshal(n)
		if err != nil {
			return err
		}
		m := bus.NewMessage("notify-"+n.ID, payload, bus.Headers{Type: contracts.TypeNotification, Tenant: tenant, User: user})
		if err := pub.Publish(subject, m); err != nil {
			return fmt.Errorf("publish notification: %w", err)
		}
		return nil
	}
}
