package ingress

import (
	"net/http"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/pkg/contracts"
)

// maxSettingsBytes bounds a PUT /v1/settings body: one small object.
const maxSettingsBytes = 1 << 10

// settingsBody is what PUT /v1/settings accepts: the language alone. The
// other settings change amounts, so they change in the chat, after a yes.
type settingsBody struct {
	Language string `json:"language" validate:"required,oneof=en fr"`
}

// serveSettings is GET /v1/settings, the caller's settings, and PUT
// /v1/settings {"language": "fr"}, which sets the language of their answers
// and of their chat on every device, and answers with the settings.
func (in *Ingress) serveSettings(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPut:
		in.api("settings", http.MethodPut, w, r, in.putSettings)
	case http.MethodGet:
		in.api("settings", http.MethodGet, w, r, in.getSettings)
	default:
		w.Header().Set("Allow", "GET, PUT")
		writeJSONError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET or PUT")
	}
}

func (in *Ingress) getSettings(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	in.settings(w, r, p, contracts.SettingsRequest{})
}

func (in *Ingress) putSettings(w http.ResponseWriter, r *http.Request, p auth.Principal) {
	if !isJSON(r) {
		writeJSONError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "Content-Type must be application/json")
		return
	}
	body, ok := readBody(w, r, maxSettingsBytes)
	if !ok {
		return
	}
	var req settingsBody
	if err := contracts.Decode(body, &req); err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad_request", err.Error()+" (only the language is set here: en or fr; change your currency, time zone or date order in the chat)")
		return
	}
	in.settings(w, r, p, contracts.SettingsRequest{Language: &req.Language})
}

func (in *Ingress) settings(w http.ResponseWriter, r *http.Request, p auth.Principal, req contracts.SettingsRequest) {
	reply, err := ask(r.Context(), in, bus.NotifierSettings(), p.TenantID, p.UserID, req)
	if err != nil {
		in.notifierFailed(w, err)
		return
	}
	reply.InboxFailure = contracts.InboxFailure{}
	writeJSON(w, http.StatusOK, reply)
}
