package ingress

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/pkg/contracts"
)

// sender is who sends a turn, as their token says: identity, roles, and
// the time zone and currency of its claims, when it has them.
type sender struct {
	tenant, user string
	roles        []string
	tz, ccy      string
}

// senderOf is the sender a verified token names.
func senderOf(p auth.Principal) sender {
	return sender{tenant: p.TenantID, user: p.UserID, roles: rolesOf(p), tz: p.Timezone, ccy: p.Currency}
}

// turnInput is what a client sends for one turn, whichever way it came
// (a websocket frame, POST /v1/chat, next an upload): text or a decision.
type turnInput struct {
	ConversationID string
	// ClientID is the client's id for the message or decision; the turn
	// id derives from it, so the same id again is the same turn. Empty,
	// a decision is identified by itself, an edit with its arguments (a
	// double-clicked approve is one turn, two different edits are two)
	// and a message gets a fresh id.
	ClientID string
	Text     string
	Confirm  *contracts.Confirm
	// Timezone and Currency, when set, override the sender's.
	Timezone string
	Currency string
	// Locale is the client's language and region, when it says one.
	Locale string
}

// newTurn is the one constructor of a UserTurn. The time zone is the
// input's, else the sender's, else the configured default (none: the
// orchestrator applies the user's own setting); the currency is the
// input's, else the sender's. It does not validate: publishTurn does.
func (in *Ingress) newTurn(s sender, t turnInput) contracts.UserTurn {
	clientID := t.ClientID
	switch {
	case clientID != "":
	case t.Confirm != nil && t.Confirm.Decision == contracts.DecisionApproveAll:
		// The same ids in any order are the same decision.
		ids := slices.Sorted(slices.Values(t.Confirm.ProposalIDs))
		sum := sha256.Sum256([]byte(strings.Join(ids, "\x00")))
		clientID = "confirm-all-" + hex.EncodeToString(sum[:16])
	case t.Confirm != nil:
		clientID = "confirm-" + t.Confirm.ProposalID + "-" + t.Confirm.Decision
		if t.Confirm.Decision == "edit" {
			clientID += "-" + argsKey(t.Confirm.Args)
		}
	default:
		clientID = in.newID()
	}
	return contracts.UserTurn{
		TurnID: turnID(s.tenant, s.user, t.ConversationID, clientID), TenantID: s.tenant, UserID: s.user, Roles: s.roles,
		ConversationID: t.ConversationID, Text: t.Text, Confirm: t.Confirm,
		Timezone: firstSet(t.Timezone, s.tz, in.cfg.DefaultTimezone), Currency: firstSet(t.Currency, s.ccy), Locale: t.Locale,
		SentAt: in.now().UTC(),
	}
}

// firstSet is the first of values that is not empty.
func firstSet(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// argsKey identifies an edit's arguments whatever their spacing and key
// order: a hash of their canonical JSON (numbers kept as written), or of
// the bytes themselves when they are not JSON (publishTurn refuses those).
func argsKey(args json.RawMessage) string {
	canon := []byte(args)
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err == nil {
		if b, err := json.Marshal(v); err == nil {
			canon = b
		}
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:16])
}
