package config

import (
	"strings"
	"testing"
)

func TestGoogleOAuthSettings(t *testing.T) {
	key := strings.Repeat("ab", 32)
	secret := "GOCSPX-client-secret-value"
	tests := []struct {
		name string
		give map[string]string
		want []string // settings named in the error; none: valid
	}{
		{"gmail without a client", map[string]string{}, nil},
		{"a full client", map[string]string{"PURSER_GOOGLE_CLIENT_ID": "id.apps", "PURSER_GOOGLE_CLIENT_SECRET": secret, "PURSER_GOOGLE_REDIRECT_URL": "https://purser.example/v1/mail/callback"}, nil},
		{"an id alone", map[string]string{"PURSER_GOOGLE_CLIENT_ID": "id.apps"}, []string{"PURSER_GOOGLE_CLIENT_SECRET", "PURSER_GOOGLE_REDIRECT_URL"}},
		{"a secret alone", map[string]string{"PURSER_GOOGLE_CLIENT_SECRET": secret}, []string{"PURSER_GOOGLE_CLIENT_ID", "PURSER_GOOGLE_REDIRECT_URL"}},
		{"bad endpoints", map[string]string{"PURSER_GOOGLE_CLIENT_ID": "id.apps", "PURSER_GOOGLE_CLIENT_SECRET": secret, "PURSER_GOOGLE_REDIRECT_URL": "/v1/mail/callback",
			"PURSER_GOOGLE_TOKEN_URL": "ftp://x", "PURSER_GOOGLE_AUTH_URL": "nope", "PURSER_GOOGLE_REVOKE_URL": "http://"},
			[]string{"PURSER_GOOGLE_REDIRECT_URL", "PURSER_GOOGLE_TOKEN_URL", "PURSER_GOOGLE_AUTH_URL", "PURSER_GOOGLE_REVOKE_URL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := map[string]string{"PURSER_MAIL": "gmail", "PURSER_MAIL_TOKEN_KEY": key}
			for k, v := range tt.give {
				kv[k] = v
			}
			c := FromEnv(env(kv))
			err := c.Check(ModeUp)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check = nil, want errors naming %v", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check = %v, does not name %s", err, w)
				}
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("Check echoes the client secret: %v", err)
			}
		})
	}
	c := FromEnv(env(nil))
	if c.GoogleOAuth() || c.GoogleTokenURL != "https://oauth2.googleapis.com/token" || c.GoogleRevokeURL != "https://oauth2.googleapis.com/revoke" {
		t.Errorf("defaults: %+v", c)
	}
}
