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

// gmailFor is the Gmail a toolrunner reads (PURSER_MAIL=gmail), its tokens
// refreshed through the Google OAuth client when one is configured, and
// the responder that connects and disconnects users' Gmail for the
// ingress. Draining nc stops the responder.
func gmailFor(cfg config.Config, st *store.Store, nc *nats.Conn, pub message.Publisher, log *slog.Logger, now func() time.Time) (toolrunner.Mail, error) {
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
