package app

import (
	"log/slog"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/services/toolrunner"
	"github.com/purser-ai/purser/services/toolrunner/mailbox"
)

// mailFor is the mail a toolrunner reads: the local mailbox folder, or
// with PURSER_MAIL=gmail the Gmail API, its tokens refreshed through the
// Google OAuth client when one is configured. Either way it answers the
// ingress's mail connect requests on nc (a local mailbox says Gmail is not
// enabled); draining nc stops that.
func mailFor(cfg config.Config, st *store.Store, nc *nats.Conn, pub message.Publisher, log *slog.Logger, now func() time.Time) (toolrunner.Mail, error) {
	if cfg.Mail != "gmail" {
		off := toolrunner.MailNotConfigured("This server reads a local mailbox (PURSER_MAIL=local): there is no Gmail to connect.")
		if _, err := toolrunner.RespondMail(nc, off, log); err != nil {
			return nil, err
		}
		return mailbox.Local{Dir: cfg.MailboxPath()}, nil
	}
	key, _ := cfg.TokenKey() // checked at start-up
	tokens := mailbox.StoredTokens{Store: st, Key: key, Disconnected: toolrunner.MailDisconnected(pub, now), Now: now}
	if cfg.GoogleOAuth() {
		tokens.OAuth = mailbox.GoogleOAuth(cfg.GoogleClientID, cfg.GoogleClientSecret, cfg.GoogleRedirectURL, cfg.GoogleAuthURL, cfg.GoogleTokenURL)
	}
	connector := &mailbox.Connector{OAuth: tokens.OAuth, RevokeURL: cfg.GoogleRevokeURL, Tokens: tokens, Now: now}
	if _, err := toolrunner.RespondMail(nc, connector, log); err != nil {
		return nil, err
	}
	return mailbox.Gmail{Tokens: tokens, Endpoint: cfg.GmailEndpoint}, nil
}
