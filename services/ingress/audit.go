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

// serveAudit is GET /v1/audit?limit=N: the latest tool calls, newest
// first. An owner reads the tenant's calls, who called what, when and with
// what outcome, with other people's arguments left out; anyone else reads
// their own calls. Everyone's own calls carry their arguments in full.
func (in *Ingress) serveAudit(w http.ResponseWriter, r *http.Request) {
	in.api("audit", http.MethodGet, w, r, func(w http.ResponseWriter, r *http.Request, p auth.Principal) {
		limit, ok := limitParam(w, r, 50)
		if !ok {
			return
		}
		scope := contracts.AuditScopeOwn
		if p.HasRole(auth.RoleOwner) {
			scope = contracts.AuditScopeTenant
		}
		reply, err := ask(r.Context(), in, bus.NotifierAudit(), p.TenantID, p.UserID, contracts.AuditRequest{Limit: limit, Scope: scope})
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
