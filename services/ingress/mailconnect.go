package ingress

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Connecting Gmail. The ingress holds neither the OAuth client secret nor
// the key that seals tokens: it asks the toolrunner, by core NATS
// request/reply on bus.MailSubject, for the consent URL, to exchange the
// code Google sends back, for the status and to disconnect.
//
//	GET    /v1/mail          {"connected": bool}
//	GET    /v1/mail/connect  {"url": consent URL}  (send the user there)
//	GET    /v1/mail/callback ?code&state           (Google sends the user here)
//	DELETE /v1/mail          revoke and forget the token
//	GET    /mail             the web page with Connect and Disconnect

// mailRequestTimeout bounds one mail request: a code exchange waits on
// Google.
const mailRequestTimeout = 20 * time.Second

//go:embed web/mail.html web/mail.js
var mailFiles embed.FS

// errMailUnavailable is returned when no toolrunner answered.
var errMailUnavailable = errors.New("mail connection unavailable")

func (in *Ingress) mailRoutes(mux *http.ServeMux) {
	mux.HandleFunc("/v1/mail", in.serveMail)
	mux.HandleFunc("/v1/mail/connect", in.serveMailConnect)
	mux.HandleFunc("/v1/mail/callback", in.serveMailCallback)
	for pattern, file := range map[string]struct{ name, contentType string }{
		"GET /mail":    {"web/mail.html", "text/html; charset=utf-8"},
		"GET /mail.js": {"web/mail.js", "text/javascript; charset=utf-8"},
	} {
		body, err := mailFiles.ReadFile(file.name)
		if err != nil {
			panic(err) // embedded at build time: cannot happen
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Set("Content-Type", file.contentType)
			h.Set("Content-Security-Policy", webCSP)
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "no-referrer")
			h.Set("Cache-Control", "no-cache")
			if r.Method == http.MethodHead {
				return
			}
			_, _ = w.Write(body)
		})
	}
}

// mailRequest asks the toolrunner. A reply that carries an error is
// returned as *contracts.MailError; no answer is errMailUnavailable.
func (in *Ingress) mailRequest(ctx context.Context, op, tenant, user string, req contracts.MailRequest) (contracts.MailReply, error) {
	subject, err := bus.MailSubject(op, tenant, user)
	if err != nil {
		return contracts.MailReply{}, err
	}
	body, err := json.Marshal(req)
	if err != nil {
		return contracts.MailReply{}, fmt.Errorf("encode mail %s request: %w", op, err)
	}
	ctx, cancel := context.WithTimeout(ctx, mailRequestTimeout)
	defer cancel()
	msg, err := in.nc.RequestWithContext(ctx, subject, body)
	if err != nil {
		if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) {
			return contracts.MailReply{}, fmt.Errorf("mail %s: %w", op, errMailUnavailable)
		}
		return contracts.MailReply{}, fmt.Errorf("mail %s request: %w", op, err)
	}
	var reply contracts.MailReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return contracts.MailReply{}, fmt.Errorf("decode mail %s reply: %w", op, err)
	}
	if reply.Error != nil {
		return contracts.MailReply{}, reply.Error
	}
	return reply, nil
}

// mailFailure is the status, code and detail a failed mail request answers.
func (in *Ingress) mailFailure(err error) (int, string, string) {
	var merr *contracts.MailError
	switch {
	case errors.As(err, &merr) && (merr.Code == contracts.MailBadState || merr.Code == contracts.MailBadCode || merr.Code == contracts.MailBadRequest):
		return http.StatusBadRequest, merr.Code, merr.Message
	case errors.As(err, &merr) && merr.Code == contracts.MailNotConfigured:
		return http.StatusNotImplemented, merr.Code, merr.Message
	case errors.Is(err, errMailUnavailable):
		return http.StatusServiceUnavailable, "unavailable", "Gmail connection is unavailable: no toolrunner answered; retry later"
	default:
		if !errors.As(err, &merr) {
			in.log.Error("mail request", "err", err)
		}
		return http.StatusServiceUnavailable, "unavailable", "Gmail connection is unavailable right now; retry"
	}
}

func (in *Ingress) mailFailed(w http.ResponseWriter, err error) {
	status, code, detail := in.mailFailure(err)
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSONError(w, status, code, detail)
}

type mailStatus struct {
	Connected bool   `json:"connected"`
	Warning   string `json:"warning,omitempty"`
}

// serveMail is GET /v1/mail (is the caller's Gmail connected?) and
// DELETE /v1/mail (disconnect it: Google is asked to revoke the token,
// which is deleted).
func (in *Ingress) serveMail(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodDelete {
		w.Header().Set("Allow", "GET, DELETE")
		in.metrics.httpRequests.WithLabelValues("mail", strconv.Itoa(http.StatusMethodNotAllowed)).Inc()
		writeJSONError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET or DELETE")
		return
	}
	in.api("mail", r.Method, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		op := contracts.MailOpStatus
		if r.Method == http.MethodDelete {
			op = contracts.MailOpRevoke
		}
		reply, err := in.mailRequest(r.Context(), op, p.TenantID, p.UserID, contracts.MailRequest{})
		if err != nil {
			in.mailFailed(w, err)
			return
		}
		writeJSON(w, http.StatusOK, mailStatus{Connected: reply.Connected, Warning: reply.Warning})
	})
}

type mailConsent struct {
	URL string `json:"url"`
}

// serveMailConnect is GET /v1/mail/connect: the Google consent URL for
// the caller. Its state names the caller and expires; the callback
// checks it.
func (in *Ingress) serveMailConnect(w http.ResponseWriter, r *http.Request) {
	in.api("mail_connect", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		reply, err := in.mailRequest(r.Context(), contracts.MailOpConnect, p.TenantID, p.UserID, contracts.MailRequest{})
		if err != nil {
			in.mailFailed(w, err)
			return
		}
		// The browser that asked keeps the state's nonce: the callback
		// it comes back to is then known to be its own, not a link
		// someone else started.
		if q, err := url.Parse(reply.URL); err == nil {
			if st, _, _, err := contracts.ParseMailState(q.Query().Get("state")); err == nil {
				http.SetCookie(w, &http.Cookie{Name: mailCookie, Value: st.Nonce, Path: "/v1/mail/", MaxAge: 600,
					HttpOnly: true, Secure: secureRequest(r), SameSite: http.SameSiteLaxMode})
			}
		}
		writeJSON(w, http.StatusOK, mailConsent{URL: reply.URL})
	})
}

// serveMailCallback is GET /v1/mail/callback, where Google sends the user
// back with a code and the state. The state says whose Gmail this is; the
// toolrunner checks its signature and expiry before it exchanges the code.
// A browser arriving from Google carries no token, so it must carry the
// cookie GET /v1/mail/connect set with the state's nonce: a consent link
// started by someone else (who would then read this browser's Gmail) is
// refused. A client that follows the redirect itself sends its token
// instead, which must name the user the state names. Neither the code nor
// the state is logged or echoed.
func (in *Ingress) serveMailCallback(w http.ResponseWriter, r *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	defer func() { in.metrics.httpRequests.WithLabelValues("mail_callback", strconv.Itoa(sw.status)).Inc() }()
	// The URL holds the code: no page this answers may pass it on.
	sw.Header().Set("Referrer-Policy", "no-referrer")
	html := wantsHTML(r)
	if r.Method != http.MethodGet {
		sw.Header().Set("Allow", http.MethodGet)
		writeJSONError(sw, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
		return
	}
	fail := func(status int, code, detail string) {
		if status == http.StatusServiceUnavailable {
			sw.Header().Set("Retry-After", "1")
		}
		if html {
			writeMailPage(sw, status, "Gmail was not connected", detail)
			return
		}
		writeJSONError(sw, status, code, detail)
	}
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		fail(http.StatusBadRequest, "consent_refused", "Google did not grant access ("+oauthErrorText(e)+"); nothing was connected.")
		return
	}
	state, code := q.Get("state"), q.Get("code")
	st, _, _, err := contracts.ParseMailState(state)
	if err != nil || code == "" || len(code) > 2048 {
		fail(http.StatusBadRequest, contracts.MailBadState, "This Gmail connection link is not valid. Start again from Connect Gmail.")
		return
	}
	if _, _, terr := auth.TokenFromRequest(r); terr == nil {
		p, ok := in.authenticate(sw, r)
		if !ok {
			return
		}
		if p.TenantID != st.Tenant || p.UserID != st.User {
			fail(http.StatusBadRequest, contracts.MailBadState, "This Gmail connection link was made for another user.")
			return
		}
	} else if c, err := r.Cookie(mailCookie); err != nil || c.Value != st.Nonce {
		// Without a token, only the browser that started this connection
		// may finish it: a link someone else started would give them
		// this Gmail.
		fail(http.StatusBadRequest, contracts.MailBadState, "This Gmail connection was not started in this browser. Start again from Connect Gmail here.")
		return
	}
	reply, err := in.mailRequest(r.Context(), contracts.MailOpCallback, st.Tenant, st.User, contracts.MailRequest{Code: code, State: state})
	if err != nil {
		status, c, detail := in.mailFailure(err)
		fail(status, c, detail)
		return
	}
	http.SetCookie(sw, &http.Cookie{Name: mailCookie, Path: "/v1/mail/", MaxAge: -1, HttpOnly: true, Secure: secureRequest(r), SameSite: http.SameSiteLaxMode})
	if html {
		writeMailPage(sw, http.StatusOK, "Gmail is connected", "purser can now search your Gmail (read-only) and import statements from it. You can close this tab, or go back to purser.")
		return
	}
	writeJSON(sw, http.StatusOK, mailStatus{Connected: reply.Connected})
}

// mailCookie holds, in the browser that asked for a consent URL, the
// nonce of its state.
const mailCookie = "purser_mail_state"

// secureRequest reports whether the client reached purser over TLS (here,
// or at a proxy that says so), so that cookies are marked Secure.
func secureRequest(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// oauthErrorText keeps an OAuth error code from the query to a known,
// short form, so nothing a link carries is reflected.
func oauthErrorText(code string) string {
	switch code {
	case "access_denied":
		return "access was denied"
	case "invalid_scope", "invalid_request", "unauthorized_client", "server_error", "temporarily_unavailable":
		return code
	}
	return "an error"
}

// wantsHTML reports whether the caller is a browser asking for a page.
func wantsHTML(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if mt, _, _ := strings.Cut(strings.TrimSpace(part), ";"); mt == "text/html" {
				return true
			}
		}
	}
	return false
}

var mailPage = template.Must(template.New("mail").Parse(`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>purser · {{.Title}}</title><link rel="stylesheet" href="/app.css"></head>
<body><main class="mail"><h1>{{.Title}}</h1><p>{{.Detail}}</p><p><a href="/mail">Gmail settings</a> · <a href="/">Back to purser</a></p></main></body>
</html>
`))

func writeMailPage(w http.ResponseWriter, status int, title, detail string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", webCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = mailPage.Execute(w, struct{ Title, Detail string }{title, detail})
}
