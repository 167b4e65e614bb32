package systest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/oauth2"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/natstest"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/syncbuf"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/ingress"
	"github.com/purser-ai/purser/services/notifier"
	"github.com/purser-ai/purser/services/orchestrator/llm"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
	"github.com/purser-ai/purser/services/toolrunner/mailbox"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/gmailtest"
	"github.com/purser-ai/purser/services/toolrunner/mailbox/googletest"
)

// The secrets of a full run: every one is used below, and none may appear
// in any log line any service writes.
var (
	signingKey   = []byte("systest-signing-key-0123456789abcdef")
	apiKey       = "sk-systest-0123456789abcdefghij"
	clientSecret = "GOCSPX-systest-client-secret"
	accessToken  = "ya29.systest-access-token-0123456789"
	refreshToken = "1//systest-refresh-token-0123456789"
	sealKey      = []byte("fedcba9876543210fedcba9876543210")
	mailBody     = "Dear customer, your one-time passcode is 482913"
)

// logLines collects every log line of the run, at debug level.
type logLines struct{ syncbuf.Buffer }

func (l *logLines) lines() []string {
	return strings.Split(strings.TrimSpace(l.String()), "\n")
}

// lateTokens lets the Gmail adapter be built before the system's store.
type lateTokens struct{ mailbox.StoredTokens }

// front runs the ingress and the notifier on the system's NATS server, as
// purser up does, and returns the ingress's base URL.
func front(t *testing.T, s *systest.System, log *slog.Logger) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nnc := natstest.Connect(t, s.Srv, "notifier")
	njs, err := jetstream.New(nnc)
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Provision(ctx, njs, bus.NotifierConsumers()...); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	npub := bus.NewPublisher(nnc, njs)
	n := notifier.New(s.Store, npub, reg, log, time.Now)
	resp, err := n.Respond(nnc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(resp.Close)
	sub := bus.NewSubscriber(njs, "notifier", bus.NotifierConsumers(), log)
	router, err := bus.NewRouter("notifier", npub, log, bus.NewRouterMetrics(reg))
	if err != nil {
		t.Fatal(err)
	}
	n.Register(router, sub)
	rctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- router.Run(rctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("notifier router: %v", err)
		}
		_ = sub.Close()
	})
	<-router.Running()

	verifier, err := auth.NewVerifier(auth.Config{Secret: signingKey, Issuer: "purser", Audience: "purser"})
	if err != nil {
		t.Fatal(err)
	}
	inc := natstest.Connect(t, s.Srv, "ingress")
	ijs, err := jetstream.New(inc)
	if err != nil {
		t.Fatal(err)
	}
	in := ingress.New(ingress.Config{PingInterval: time.Hour}, verifier, inc, bus.NewPublisher(inc, ijs), ingress.NewMetrics(reg), log, time.Now)
	mux := http.NewServeMux()
	in.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { in.Close(); srv.Close() })
	return srv.URL
}

// Rule: no secret in any log line. A full run (ingress, notifier,
// orchestrator with the OpenAI adapter, toolrunner with Gmail) at debug
// level: a conversation over the socket and HTTP that searches mail,
// proposes and approves a change, refused tokens of every kind, and a
// model server that echoes the API key in its error. Every line written is
// searched for each token and secret used.
func TestNoSecretInAnyLogLine(t *testing.T) {
	logs := &logLines{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))

	model := llmtest.New(t)
	m, err := llm.New(llm.Config{APIKey: apiKey, BaseURL: model.URL, Model: "test-model", Timeout: 20 * time.Second, MaxRetries: 1,
		Backoff: time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	google := googletest.New(t, "systest.apps.googleusercontent.com", clientSecret, accessToken)
	gm := gmailtest.New(t, accessToken, gmailtest.Message{ID: "m1", From: "statements@bank.example", Subject: "Your statement",
		Body: mailBody, Date: time.Now().AddDate(0, 0, -2)})
	late := &lateTokens{}
	s := systest.Start(t, systest.Options{DSN: storetest.SQLiteDSN(t), Orchestrators: 1, Toolrunners: 1, Model: m, Log: log,
		Mail: mailbox.Gmail{Tokens: late, Endpoint: gm.URL}})
	late.StoredTokens = mailbox.StoredTokens{Store: s.Store, Key: sealKey,
		OAuth: mailbox.GoogleOAuth("systest.apps.googleusercontent.com", clientSecret, "https://purser.example/v1/mail/callback", google.AuthURL, google.TokenURL)}
	if err := late.Put(context.Background(), "acme", "ann", &oauth2.Token{AccessToken: accessToken, RefreshToken: refreshToken,
		TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	base := front(t, s, log)
	wsURL := "ws" + strings.TrimPrefix(base, "http") + "/v1/ws"

	mint := func(key []byte, now func() time.Time) string {
		tok, err := auth.NewMinter(key, "purser", "purser", now).Mint("acme", "ann", []auth.Role{auth.RoleMember}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	valid := mint(signingKey, nil)
	parts := strings.Split(valid, ".")
	enc := base64.RawURLEncoding.EncodeToString
	forged, _ := json.Marshal(map[string]any{"iss": "purser", "aud": "purser", "sub": "ann", "tenant": "bravo", "roles": []string{"owner"},
		"exp": time.Now().Add(time.Hour).Unix()})
	refused := []string{
		mint(signingKey, func() time.Time { return time.Now().Add(-2 * time.Hour) }), // expired
		mint([]byte("not-the-signing-key-not-the-signing-key"), nil),                 // another key
		parts[0] + "." + enc(forged) + "." + parts[2],                                // claims rewritten
		enc([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + parts[1] + ".",             // alg none
	}

	// The socket: search the mail, then propose and approve an expense.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + valid}},
		Subprotocols: []string{auth.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(-1)
	send := func(frame string) {
		t.Helper()
		if err := conn.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
	}
	next := func(typ string) contracts.ServerFrame {
		t.Helper()
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for %s: %v", typ, err)
			}
			var f contracts.ServerFrame
			if err := json.Unmarshal(data, &f); err != nil {
				t.Fatal(err)
			}
			if f.Type == typ {
				return f
			}
			if f.Type == contracts.FrameError {
				t.Fatalf("waiting for %s: %+v", typ, f.Error)
			}
		}
	}
	model.Push(llmtest.ToolCalls(llmtest.Call{ID: "c1", Name: contracts.ToolSearchGmail, Args: []string{`{"query":"statement"}`}}),
		llmtest.Text("You have one statement mail."))
	send(`{"type":"message","id":"m1","conversation_id":"c1","text":"find my statement"}`)
	next(contracts.FrameAnswer)
	model.Push(llmtest.ToolCalls(llmtest.Call{ID: "c2", Name: contracts.ToolAddExpense, Args: []string{`{"item":"tea","amount":"2.00","currency":"GBP","date":"2026-11-22"}`}}))
	send(`{"type":"message","id":"m2","conversation_id":"c1","text":"add tea £2"}`)
	p := next(contracts.FrameProposal)
	model.Push(llmtest.Text("Added tea."))
	send(`{"type":"confirm","id":"m3","conversation_id":"c1","proposal_id":"` + p.Proposal.ProposalID + `","decision":"approve"}`)
	next(contracts.FrameAnswer)

	// HTTP with the valid token, and a model server that echoes the key.
	model.Push(llmtest.Error(http.StatusUnauthorized, "", "Incorrect API key provided: "+apiKey))
	post := func(token, body string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := post(valid, `{"message":"hello","conversation_id":"c2"}`); status == http.StatusOK || status == http.StatusUnauthorized {
		t.Errorf("a turn whose model refused the key answered %d", status)
	}

	// Every kind of refused token, on both doors.
	for _, tok := range refused {
		if _, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + tok}}}); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a refused token upgraded: %v %v", resp, err)
		}
		if status := post(tok, `{"message":"hello"}`); status != http.StatusUnauthorized {
			t.Errorf("a refused token over HTTP: %d", status)
		}
	}
	conn.Close(websocket.StatusNormalClosure, "")
	s.Bus.Quiet(300 * time.Millisecond)

	secrets := map[string]string{"signing key": string(signingKey), "API key": apiKey, "OAuth client secret": clientSecret,
		"OAuth access token": accessToken, "OAuth refresh token": refreshToken, "seal key": string(sealKey), "mail body": mailBody,
		"valid JWT": valid, "JWT signature": parts[2]}
	for i, tok := range refused {
		secrets["refused JWT "+string(rune('a'+i))] = tok
	}
	lines := logs.lines()
	levels := map[string]int{}
	for _, line := range lines {
		var probe struct {
			Level string `json:"level"`
		}
		if err := json.Unmarshal([]byte(line), &probe); err != nil {
			t.Errorf("a log line is not JSON: %.200s", line)
		}
		levels[probe.Level]++
		for name, secret := range secrets {
			if strings.Contains(line, secret) {
				t.Errorf("a log line holds the %s: %.300s", name, line)
			}
		}
	}
	// The search proves something only if the run logged at every level
	// and logged the refusals.
	if levels["DEBUG"] == 0 || levels["INFO"] == 0 || levels["WARN"]+levels["ERROR"] == 0 {
		t.Errorf("log levels seen: %v; the run must log at debug, info and warn or error", levels)
	}
	if n := strings.Count(strings.Join(lines, "\n"), "authentication refused"); n < 2*len(refused) {
		t.Errorf("%d refusals logged, want %d", n, 2*len(refused))
	}
}
