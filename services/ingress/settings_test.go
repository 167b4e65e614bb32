package ingress_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/purser-ai/purser/pkg/contracts"
)

// The chat's language switch is kept in the person's settings, so every
// device they sign in on speaks it: PUT /v1/settings sets the language
// alone, for the caller alone; GET reads it back; anything else is refused
// with words that say what may be set here.
func TestSettingsKeepTheLanguage(t *testing.T) {
	h := newHarness(t)
	ann, bob := h.token("acme", "ann"), h.token("acme", "bob")
	read := func(token string, c call) contracts.SettingsReply {
		t.Helper()
		c.token = token
		resp := h.do(c)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s", c.method, c.path, resp.StatusCode, body)
		}
		var got contracts.SettingsReply
		if err := contracts.Decode(body, &got); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return got
	}
	get := call{method: http.MethodGet, path: "/v1/settings"}
	if got := read(ann, get); got.Language != "" {
		t.Errorf("a new person's language is %q, want none set", got.Language)
	}
	put := call{method: http.MethodPut, path: "/v1/settings", contentType: "application/json", body: `{"language":"fr"}`}
	if got := read(ann, put); got.Language != "fr" {
		t.Errorf("PUT answered language %q", got.Language)
	}
	if got := read(ann, get); got.Language != "fr" {
		t.Errorf("after PUT the language reads %q", got.Language)
	}
	if got := read(bob, get); got.Language != "" {
		t.Errorf("ann's choice reached bob: %q", got.Language)
	}
	// What the orchestrator reads for a turn whose client names no locale.
	set, err := h.store.GetUserSettings(context.Background(), "acme", "ann")
	if err != nil || set.Language != "fr" || set.Currency != "" {
		t.Errorf("stored settings = %+v, %v", set, err)
	}

	for _, c := range []struct{ body, contentType string }{
		{`{"language":"de"}`, "application/json"},
		{`{"language":"fr","currency":"EUR"}`, "application/json"},
		{`{}`, "application/json"},
		{`not json`, "application/json"},
	} {
		resp := h.do(call{method: http.MethodPut, path: "/v1/settings", token: ann, contentType: c.contentType, body: c.body})
		var e struct{ Error, Detail string }
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(b, &e) != nil || e.Error != "bad_request" {
			t.Errorf("PUT %s: %d %s, want 400 bad_request", c.body, resp.StatusCode, b)
		}
	}
	if got := read(ann, get); got.Language != "fr" || got.Currency != "" {
		t.Errorf("refused PUTs changed the settings: %+v", got)
	}
	assertError(t, h.do(call{method: http.MethodPut, path: "/v1/settings", token: ann, contentType: "text/plain", body: `{"language":"en"}`}), http.StatusUnsupportedMediaType, "unsupported_media_type")
	resp := h.do(call{method: http.MethodPost, path: "/v1/settings", token: ann})
	if resp.Header.Get("Allow") != "GET, PUT" {
		t.Errorf("Allow = %q", resp.Header.Get("Allow"))
	}
	assertError(t, resp, http.StatusMethodNotAllowed, "method_not_allowed")
	assertError(t, h.do(call{method: http.MethodGet, path: "/v1/settings"}), http.StatusUnauthorized, "unauthorized")
}
