package contracts

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// Ops of a mail request, sent by the ingress to the toolrunner on
// purser.mail.<op>.<tenant>.<user> (core NATS request/reply).
const (
	// MailOpConnect asks for the Google consent URL to send the user to.
	MailOpConnect = "connect"
	// MailOpCallback hands over the code and state Google sent back.
	MailOpCallback = "callback"
	// MailOpStatus asks whether the user's Gmail is connected.
	MailOpStatus = "status"
	// MailOpRevoke disconnects the user's Gmail.
	MailOpRevoke = "revoke"
)

// MailOps are every mail request the toolrunner answers.
var MailOps = []string{MailOpConnect, MailOpCallback, MailOpStatus, MailOpRevoke}

// MailRequest is the body of a mail request; only the callback op reads it.
type MailRequest struct {
	Code  string `json:"code,omitempty" validate:"max=2048"`
	State string `json:"state,omitempty" validate:"max=1024"`
}

// MailReply answers a MailRequest. When Error is set nothing else is.
type MailReply struct {
	// URL is the consent URL (connect op).
	URL string `json:"url,omitempty"`
	// Connected says whether a token is stored (every op but connect).
	Connected bool `json:"connected"`
	// Warning says what the revoke op could not do.
	Warning string     `json:"warning,omitempty"`
	Error   *MailError `json:"error,omitempty"`
}

// MailError says why a mail request failed, without tokens or internals.
type MailError struct {
	Code    string `json:"code"` // one of the Mail* codes
	Message string `json:"message"`
}

func (e *MailError) Error() string { return e.Code + ": " + e.Message }

// Codes of MailError.
const (
	MailBadRequest    = "bad_request"
	MailBadState      = "bad_state"      // forged, expired or someone else's state
	MailBadCode       = "bad_code"       // Google refused the code
	MailNotConfigured = "not_configured" // no Google OAuth client on this server
	MailUnavailable   = "unavailable"
)

// CodeMailNotConnected is the tool error code when the user's Gmail is not
// connected, or its connection broke: the message says to reconnect.
const CodeMailNotConnected = "mail_not_connected"

// NotifyMailDisconnected is the Notification kind sent once when a user's
// Gmail connection breaks (Google refused the refresh token).
const NotifyMailDisconnected = "mail_disconnected"

// MailState is what the state of a Gmail consent URL carries. The
// toolrunner signs it; the ingress reads it only to learn which user a
// callback is for, and the toolrunner checks the signature.
type MailState struct {
	Tenant  string `json:"t"`
	User    string `json:"u"`
	Nonce   string `json:"n"`
	Expires int64  `json:"e"` // Unix seconds
}

// Encode is the signed part of a state: the JSON, base64url.
func (s MailState) Encode() (string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// errMailState never quotes the state.
var errMailState = errors.New("malformed state")

// ParseMailState splits a state, "<encoded>.<signature>", into its
// fields, its signed part and its signature. It does not check the
// signature.
func ParseMailState(state string) (s MailState, signed, sig string, err error) {
	signed, sig, ok := strings.Cut(state, ".")
	if !ok || signed == "" || sig == "" || len(state) > 1024 {
		return MailState{}, "", "", errMailState
	}
	raw, err := base64.RawURLEncoding.DecodeString(signed)
	if err != nil {
		return MailState{}, "", "", errMailState
	}
	if err := json.Unmarshal(raw, &s); err != nil || !ValidID(s.Tenant) || !ValidID(s.User) {
		return MailState{}, "", "", errMailState
	}
	return s, signed, sig, nil
}
