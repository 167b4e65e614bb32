package ingress

import (
	"errors"
	"net/http"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// maxListLimit is the most notifications one GET returns.
const maxListLimit = 200

type notificationList struct {
	Notifications []contracts.Notification `json:"notifications"`
}

// serveNotifications is GET /v1/notifications?unread=1&limit=N: the
// caller's inbox, newest first.
func (in *Ingress) serveNotifications(w http.ResponseWriter, r *http.Request) {
	in.api("notifications", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		q := r.URL.Query()
		req := contracts.NotificationsRequest{Limit: 50}
		switch q.Get("unread") {
		case "", "0", "false":
		case "1", "true":
			req.Unread = true
		default:
			writeJSONError(w, http.StatusBadRequest, "bad_request", "unread: must be 1 or 0")
			return
		}
		limit, ok := limitParam(w, r, req.Limit)
		if !ok {
			return
		}
		req.Limit = limit
		reply, err := ask(r.Context(), in, bus.NotifierNotifications(), p.TenantID, p.UserID, req)
		if err != nil {
			in.notifierFailed(w, err)
			return
		}
		list := notificationList{Notifications: reply.Notifications}
		if list.Notifications == nil {
			list.Notifications = []contracts.Notification{}
		}
		writeJSON(w, http.StatusOK, list)
	})
}

type markedRead struct {
	ID   string `json:"id"`
	Read bool   `json:"read"`
}

// serveMarkRead is POST /v1/notifications/{id}/read. Another user's id
// is not found, like an unknown one.
func (in *Ingress) serveMarkRead(w http.ResponseWriter, r *http.Request) {
	in.api("notification_read", http.MethodPost, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		id := r.PathValue("id")
		if !bus.ValidToken(id) {
			writeJSONError(w, http.StatusNotFound, "not_found", "no such notification")
			return
		}
		if _, err := ask(r.Context(), in, bus.NotifierMarkRead(), p.TenantID, p.UserID, contracts.MarkReadRequest{ID: id}); err != nil {
			in.notifierFailed(w, err)
			return
		}
		writeJSON(w, http.StatusOK, markedRead{ID: id, Read: true})
	})
}

// notifierFailed answers for a failed notifier request.
func (in *Ingress) notifierFailed(w http.ResponseWriter, err error) {
	var nerr *contracts.InboxError
	switch {
	case errors.As(err, &nerr) && nerr.Code == contracts.InboxNotFound:
		writeJSONError(w, http.StatusNotFound, "not_found", "no such notification")
	case errors.As(err, &nerr) && nerr.Code == contracts.InboxBadRequest:
		writeJSONError(w, http.StatusBadRequest, "bad_request", nerr.Message)
	default:
		if !errors.As(err, &nerr) && !errors.Is(err, errNotifierUnavailable) {
			in.log.Error("notifier request", "err", err)
		}
		w.Header().Set("Retry-After", "1")
		writeJSONError(w, http.StatusServiceUnavailable, "unavailable", "that is unavailable for a moment; retry")
	}
}
