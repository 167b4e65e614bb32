package ingress

import (
	"net/http"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

type auditList struct {
	Audit []contracts.AuditEntry `json:"audit"`
}

// serveAudit is GET /v1/audit?limit=N: the tenant's latest tool calls,
// newest first, for owners only (403 for members and viewers).
func (in *Ingress) serveAudit(w http.ResponseWriter, r *http.Request) {
	in.api("audit", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		if !p.HasRole(auth.RoleOwner) {
			writeJSONError(w, http.StatusForbidden, "forbidden", "only an owner of the tenant may read its audit log")
			return
		}
		limit, ok := limitParam(w, r, 50)
		if !ok {
			return
		}
		reply, err := ask(r.Context(), in, bus.NotifierAudit(), p.TenantID, p.UserID, contracts.AuditRequest{Limit: limit})
		if err != nil {
			in.notifierFailed(w, err)
			return
		}
		list := auditList{Audit: reply.Audit}
		if list.Audit == nil {
			list.Audit = []contracts.AuditEntry{}
		}
		writeJSON(w, http.StatusOK, list)
	})
}
