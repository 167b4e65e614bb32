package app

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/auth"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator/llm/llmtest"
	"github.com/purser-ai/purser/services/toolrunner/mailbox"
)

// startUp runs Up in the background on free ports and a temporary data
// folder, and returns how to reach it. The test's cleanup stops it and
// checks that it shut down cleanly.
func startUp(t *testing.T, edit ...func(*config.Config)) Info {
	t.Helper()
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.DataDir = t.TempDir()
	cfg.HTTPAddr = "127.0.0.1:0"
	cfg.NATSListen = "127.0.0.1:0"
	for _, e := range edit {
		e(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan Info, 1)
	done := make(chan error, 1)
	logs := watchLogs(t)
	go func() { done <- Up(ctx, cfg, logs.logger(), func(i Info) { ready <- i }) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Up returned %v at shutdown", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("Up did not stop within 30 s")
		}
		logs.check(t)
	})
	logs.forbid(cfg.OpenAIKey, cfg.MailTokenKey)
	select {
	case i := <-ready:
		logs.forbid(i.DemoToken, string(i.Secret), hex.EncodeToString(i.Secret), base64.StdEncoding.EncodeToString(i.Secret))
		return i
	case err := <-done:
		t.Fatalf("Up failed: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("Up not ready within 60 s")
	}
	return Info{}
}

type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
}

func dial(t *testing.T, i Info, token string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, i.WebsocketURL(), &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": []string{"Bearer " + token}},
		Subprotocols: []string{auth.Subprotocol},
	})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return &wsClient{t: t, conn: conn}
}

func (c *wsClient) send(frame string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// read reads one frame, failing the test, which waited for what, when
// none comes before ctx ends or it is not JSON.
func (c *wsClient) read(ctx context.Context, what string) (contracts.ServerFrame, []byte) {
	c.t.Helper()
	_, data, err := c.conn.Read(ctx)
	if err != nil {
		c.t.Fatalf("waiting for %s: %v", what, err)
	}
	var f contracts.ServerFrame
	if err := json.Unmarshal(data, &f); err != nil {
		c.t.Fatalf("server sent bad JSON %q: %v", data, err)
	}
	return f, data
}

// next reads frames until one of type typ arrives, skipping tokens and
// pongs, and fails after 20 s.
func (c *wsClient) next(typ string) contracts.ServerFrame {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		f, data := c.read(ctx, "a "+typ+" frame")
		if f.Type == typ {
			return f
		}
		if f.Type != contracts.FrameToken && f.Type != contracts.FrameAck && f.Type != contracts.FrameToolStart && f.Type != contracts.FrameToolResult &&
			f.Type != contracts.FrameUserMessage {
			c.t.Fatalf("got a %s frame %s while waiting for %s", f.Type, data, typ)
		}
	}
}

// nextEach reads frames until one of each of types has arrived, in any
// order, skipping what next skips, and returns them by type.
func (c *wsClient) nextEach(types ...string) map[string]contracts.ServerFrame {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := map[string]contracts.ServerFrame{}
	for len(got) < len(types) {
		f, data := c.read(ctx, fmt.Sprintf("%v (have %d)", types, len(got)))
		switch {
		case slices.Contains(types, f.Type):
			if _, dup := got[f.Type]; dup {
				c.t.Fatalf("a second %s frame %s while waiting for %v", f.Type, data, types)
			}
			got[f.Type] = f
		case f.Type == contracts.FrameToken || f.Type == contracts.FrameAck || f.Type == contracts.FrameToolStart || f.Type == contracts.FrameToolResult ||
			f.Type == contracts.FrameUserMessage:
		default:
			c.t.Fatalf("got a %s frame %s while waiting for %v", f.Type, data, types)
		}
	}
	return got
}

func TestWalkingPath(t *testing.T) {
	t.Parallel()
	info := startUp(t)

	// Watch the bus from outside, as `nats sub 'purser.>'` would.
	nc, err := nats.Connect(info.NATSURL, adminLogin(t, info))
	if err != nil {
		t.Fatalf("connect to embedded NATS over TCP: %v", err)
	}
	defer nc.Close()
	seen := make(chan *nats.Msg, 64)
	if _, err := nc.ChanSubscribe("purser.>", seen); err != nil {
		t.Fatal(err)
	}

	c := dial(t, info, info.DemoToken)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	ack := c.next(contracts.FrameAck)
	if ack.Ack == nil || ack.Ack.ID != "m1" || ack.TurnID == "" {
		t.Fatalf("ack = %+v, want one for m1 with a turn id", ack)
	}
	ans := c.next(contracts.FrameAnswer)
	if ans.Seq < 1 || ans.TurnID != ack.TurnID || ans.ConversationID != "c1" || !strings.HasPrefix(ans.Answer.Content, "Hello!") {
		t.Fatalf("answer = %+v", ans)
	}

	// The turn and the answer crossed the bus as readable JSON on the
	// subjects of DESIGN.md, with the headers it lists.
	subjects := map[string]*nats.Msg{}
	deadline := time.After(10 * time.Second)
	for subjects["purser.turns.demo.c1"] == nil || subjects["purser.agent.demo.demo.c1"] == nil || subjects["purser.deliver.demo.demo"] == nil {
		select {
		case m := <-seen:
			subjects[m.Subject] = m
		case <-deadline:
			t.Fatalf("subjects seen: %v", keys(subjects))
		}
	}
	var turn contracts.UserTurn
	if err := contracts.Decode(subjects["purser.turns.demo.c1"].Data, &turn); err != nil || turn.Text != "hello" {
		t.Errorf("turn on the bus = %+v, %v", turn, err)
	}
	agent := subjects["purser.agent.demo.demo.c1"]
	for _, h := range []string{"Nats-Msg-Id", "Purser-Type", "Purser-Tenant", "Purser-Conversation", "Purser-Correlation-Id", "traceparent"} {
		if agent.Header.Get(h) == "" {
			t.Errorf("agent message lacks header %s: %v", h, agent.Header)
		}
	}
	if agent.Header.Get("Purser-Correlation-Id") != ack.TurnID {
		t.Errorf("correlation id = %q, want the turn id %q", agent.Header.Get("Purser-Correlation-Id"), ack.TurnID)
	}

	// The same message id again is the same turn: it is answered with the
	// first answer (the same frame, the same seq), and no new frame exists.
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	c.next(contracts.FrameAck)
	if again := c.next(contracts.FrameAnswer); again.Seq != ans.Seq || again.TurnID != ans.TurnID {
		t.Errorf("resent m1 answered with seq %d turn %s, want the first answer's %d %s", again.Seq, again.TurnID, ans.Seq, ans.TurnID)
	}
	c.send(`{"type":"message","id":"m2","conversation_id":"c1","text":"hi there"}`)
	second := c.next(contracts.FrameAnswer)
	// Between them only m2's own user_message: the resent m1 produced no
	// frame, not even a second echo of itself.
	if second.Seq != ans.Seq+2 {
		t.Errorf("second answer seq = %d, want %d (the resent m1 must not have produced a frame)", second.Seq, ans.Seq+2)
	}

	// A second socket catches up through the notifier, and the inbox
	// answers over HTTP, all inside purser up.
	c2 := dial(t, info, info.DemoToken)
	c2.send(fmt.Sprintf(`{"type":"resume","after_seq":%d}`, ans.Seq-1))
	if f := c2.next(contracts.FrameAnswer); f.Seq != ans.Seq {
		t.Errorf("resumed first frame seq = %d, want %d", f.Seq, ans.Seq)
	}
	if f := c2.next(contracts.FrameAnswer); f.Seq != second.Seq {
		t.Errorf("resumed second frame seq = %d, want %d", f.Seq, second.Seq)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+info.HTTPAddr+"/v1/notifications", nil)
	req.Header.Set("Authorization", "Bearer "+info.DemoToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var inbox struct {
		Notifications []contracts.Notification `json:"notifications"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&inbox); err != nil || resp.StatusCode != http.StatusOK || inbox.Notifications == nil {
		t.Errorf("GET /v1/notifications: %d %+v %v", resp.StatusCode, inbox, err)
	}
}

func TestBadInputAtTheSocket(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	c := dial(t, info, info.DemoToken)
	tests := []struct {
		give string
		want string
	}{
		{`{"type":"message",`, "malformed JSON"},
		{`{"type":"message","id":"m1","conversation_id":"c1","text":"hi","tool":"delete_expense"}`, "tool: unknown field"},
		{`{"type":"message","id":"m1","conversation_id":"a.b","text":"hi"}`, "conversation_id: must be 1-64"},
		{`{"type":"message","id":"m*","conversation_id":"c1","text":"hi"}`, "id: must be 1-64"},
		{`{"type":"message","id":"m1","conversation_id":"c1","text":42}`, "text: must be a string"},
		{`{"type":"launch"}`, "type: must be one of"},
	}
	for _, tt := range tests {
		c.send(tt.give)
		f := c.next(contracts.FrameError)
		if f.Error == nil || f.Error.Code != contracts.ErrCodeBadFrame || !strings.Contains(f.Error.Message, tt.want) {
			t.Errorf("frame %s: error = %+v, want bad_frame containing %q", tt.give, f.Error, tt.want)
		}
	}
	// The connection survived all of that and still works.
	c.send(`{"type":"ping"}`)
	c.next(contracts.FramePong)

	// A frame over the size limit closes the socket with 1009.
	c.send(`{"type":"message","id":"big","conversation_id":"c1","text":"` + strings.Repeat("x", 70<<10) + `"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, _, err := c.conn.Read(ctx)
		if err == nil {
			continue
		}
		if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
			t.Fatalf("close status = %v (%v), want 1009", got, err)
		}
		break
	}
}

func TestAuthBeforeUpgrade(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	expired, err := auth.NewMinter(info.Secret, "purser", "purser", func() time.Time { return time.Now().Add(-2 * time.Hour) }).
		Mint("demo", "demo", []auth.Role{auth.RoleOwner}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	forbidInLogs(t, expired)
	for name, header := range map[string]string{"no token": "", "expired": "Bearer " + expired, "garbage": "Bearer abc.def.ghi"} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		h := http.Header{}
		if header != "" {
			h.Set("Authorization", header)
		}
		_, resp, err := websocket.Dial(ctx, info.WebsocketURL(), &websocket.DialOptions{HTTPHeader: h})
		cancel()
		if err == nil {
			t.Errorf("%s: upgrade succeeded", name)
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: response = %v, want 401", name, resp)
		}
	}
	// The token in the URL is never read.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, info.WebsocketURL()+"?token="+info.DemoToken, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("token in the query: err %v, resp %v, want 401", err, resp)
	}
	// Browsers send the token as a subprotocol; the server picks purser.v1.
	conn, _, err := websocket.Dial(ctx, info.WebsocketURL(), &websocket.DialOptions{Subprotocols: []string{auth.Subprotocol, "purser.bearer." + info.DemoToken}})
	if err != nil {
		t.Fatalf("subprotocol auth: %v", err)
	}
	defer conn.CloseNow()
	if conn.Subprotocol() != auth.Subprotocol {
		t.Errorf("selected subprotocol = %q, want %q", conn.Subprotocol(), auth.Subprotocol)
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// tokensThenAnswer reads frames until an answer and returns it with the
// tokens that came before it, failing after 20 s.
func (c *wsClient) tokensThenAnswer() (tokens []contracts.ServerFrame, answer contracts.ServerFrame) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		_, data, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("read: %v", err)
		}
		var f contracts.ServerFrame
		if err := json.Unmarshal(data, &f); err != nil {
			c.t.Fatal(err)
		}
		switch f.Type {
		case contracts.FrameToken:
			tokens = append(tokens, f)
		case contracts.FrameAnswer:
			return tokens, f
		}
	}
}

// An answer the model did not stream itself (the offline model's) reaches
// the socket as one token before the Answer, not cut into words: the text
// is all there at once, and a frame per word only costs.
func TestAnAnswerNotStreamedByTheModelComesAsOneToken(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	c := dial(t, info, info.DemoToken)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello there, how are you today?"}`)
	tokens, f := c.tokensThenAnswer()
	if !strings.Contains(f.Answer.Content, " ") {
		t.Fatalf("answer %q has one word: it cannot tell one token from many", f.Answer.Content)
	}
	if len(tokens) != 1 || tokens[0].Token.Text != f.Answer.Content || tokens[0].TurnID != f.TurnID {
		first := ""
		if len(tokens) > 0 {
			first = tokens[0].Token.Text
		}
		t.Fatalf("%d tokens before the answer %q, the first %q; want one carrying it whole", len(tokens), f.Answer.Content, first)
	}
}

// With a model server configured, purser up carries the conversation
// through it and streams the answer's tokens to the socket.
func TestUpWithAModelServer(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t)
	info := startUp(t, func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIKey, c.ModelName = srv.URL, "sk-test-0123456789-never-logged", "local-model"
	})
	srv.Push(llmtest.Text("Hi", " there", ", Demo!"))
	c := dial(t, info, info.DemoToken)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"hello"}`)
	frames, f := c.tokensThenAnswer()
	if f.Answer.Content != "Hi there, Demo!" {
		t.Fatalf("answer = %q", f.Answer.Content)
	}
	var tokens []string
	for _, tok := range frames {
		tokens = append(tokens, tok.Token.Text)
	}
	if strings.Join(tokens, "") != "Hi there, Demo!" || len(tokens) != 3 {
		t.Fatalf("tokens = %q, want the three streamed pieces", tokens)
	}
	if got := srv.Requests()[0].Body["model"]; got != "local-model" {
		t.Fatalf("model asked = %v", got)
	}
	// The turn's latency and its time to first token are measured (the
	// answer may reach the socket, through the outbox relay, just before).
	var body []byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + info.MetricsAddr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), `purser_turn_seconds_count{outcome="answered"} 1`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// And the store's writer, which a turn's writes went through.
	for _, series := range []string{`purser_turn_seconds_count{outcome="answered"} 1`, "purser_turn_first_token_seconds_count 1",
		"purser_store_writer_busy_seconds_total ", `purser_store_connections{pool="readers",state="idle"}`} {
		if !strings.Contains(string(body), series) {
			t.Errorf("/metrics lacks %s", series)
		}
	}
}

// The statement flow end to end through purser up: search the demo mail,
// propose the import, approve, and the import's notification reaches the
// socket; importing the same file again adds nothing; the message whose
// body gives orders changes nothing and never reaches the bus.
func TestStatementImportEndToEnd(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	nc, err := nats.Connect(info.NATSURL, adminLogin(t, info))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var mu sync.Mutex
	var busText strings.Builder
	if _, err := nc.Subscribe("purser.>", func(m *nats.Msg) { mu.Lock(); busText.Write(m.Data); mu.Unlock() }); err != nil {
		t.Fatal(err)
	}
	c := dial(t, info, info.DemoToken)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"Find my last Visa statement and process it"}`)
	p := c.next(contracts.FrameProposal)
	if p.Proposal.Tool != contracts.ToolFetchEmailAttachments || !strings.Contains(p.Proposal.Summary, "visa_statement_") {
		t.Fatalf("proposal = %+v", p.Proposal)
	}
	// The proposal names the sender, and warns that nothing was ever
	// imported from that domain: a spoofed bank mail must not read like one.
	if !strings.Contains(p.Proposal.Summary, "statements@northbank.example") || !strings.Contains(p.Proposal.Summary, "never imported") {
		t.Errorf("first import's summary = %q, want the sender and a new-sender warning", p.Proposal.Summary)
	}
	c.send(`{"type":"confirm","id":"m2","conversation_id":"c1","proposal_id":"` + p.Proposal.ProposalID + `","decision":"approve"}`)
	got := c.nextEach(contracts.FrameAnswer, contracts.FrameNotification) // the import runs beside the answer
	ans, n := got[contracts.FrameAnswer], got[contracts.FrameNotification]
	if !strings.Contains(ans.Answer.Content, "visa_statement_") {
		t.Fatalf("answer = %q", ans.Answer.Content)
	}
	if n.Notification.Kind != "import_completed" || !strings.HasPrefix(n.Notification.Title, "Imported 12 transactions from visa_statement_") {
		t.Fatalf("notification = %+v", n.Notification)
	}

	// The same statement again: nothing new, answered at once with no
	// proposal to approve.
	c.send(`{"type":"message","id":"m3","conversation_id":"c1","text":"Find my last Visa statement and process it"}`)
	again := c.next(contracts.FrameAnswer)
	if !strings.HasPrefix(again.Answer.Content, "Nothing new in visa_statement_") || !strings.Contains(again.Answer.Content, "all 12 transactions are already in your ledger") {
		t.Fatalf("second import answer = %q", again.Answer.Content)
	}
	c.send(`{"type":"message","id":"m5","conversation_id":"c1","text":"which transactions need review?"}`)
	c.next(contracts.FrameAnswer)
	c.send(`{"type":"message","id":"m6","conversation_id":"c1","text":"how much did I spend at Tesco?"}`)
	tesco := c.next(contracts.FrameAnswer)
	if !strings.Contains(tesco.Answer.Content, "45.23") {
		t.Fatalf("tesco answer = %q", tesco.Answer.Content)
	}
	// The demo expenses are untouched: the suspicious mail changed nothing.
	c.send(`{"type":"message","id":"m7","conversation_id":"c1","text":"show my expenses this month"}`)
	list := c.next(contracts.FrameAnswer)
	if len(list.Answer.Listed) == 0 {
		t.Fatalf("expenses gone: %+v", list.Answer)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(busText.String(), "Ignore previous instructions") {
		t.Fatal("a mail body crossed the bus")
	}
}

// A hostile attachment is stopped by the sandbox and reported as a failed
// import, and the next import still works.
func TestHostileAttachmentFailsAlone(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := mailbox.WriteDemo(dir, DemoTenant, DemoUser, time.Now()); err != nil {
		t.Fatal(err)
	}
	garbage := strings.Repeat("\x00\xff<script>;;;\n", 5000)
	eml := "From: Broken Bank <statements@brokenbank.example>\r\nSubject: Your Broken Bank statement\r\nDate: " + time.Now().Add(-time.Hour).Format(time.RFC1123Z) +
		"\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n" +
		"--b\r\nContent-Type: text/csv\r\nContent-Disposition: attachment; filename=\"broken_statement.csv\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		base64.StdEncoding.EncodeToString([]byte(garbage)) + "\r\n--b--\r\n"
	if err := os.WriteFile(filepath.Join(dir, DemoTenant, DemoUser, "99-broken.eml"), []byte(eml), 0o600); err != nil {
		t.Fatal(err)
	}
	info := startUp(t, func(c *config.Config) { c.MailboxDir = dir })
	c := dial(t, info, info.DemoToken)
	importFrom := func(id, text string) contracts.ServerFrame {
		c.send(`{"type":"message","id":"` + id + `","conversation_id":"c1","text":"` + text + `"}`)
		p := c.next(contracts.FrameProposal)
		c.send(`{"type":"confirm","id":"` + id + `y","conversation_id":"c1","proposal_id":"` + p.Proposal.ProposalID + `","decision":"approve"}`)
		// The import runs beside the answer: either may come first.
		got := c.nextEach(contracts.FrameAnswer, contracts.FrameNotification)
		return got[contracts.FrameNotification]
	}
	bad := importFrom("m1", "Find my Broken Bank statement and process it")
	if bad.Notification.Kind != "import_failed" || !strings.Contains(bad.Notification.Title, "broken_statement.csv") ||
		!strings.Contains(bad.Notification.Body, "not a statement we can read") {
		t.Fatalf("hostile import notification = %+v", bad.Notification)
	}
	good := importFrom("m2", "Find my last Visa statement and process it")
	if good.Notification.Kind != "import_completed" {
		t.Fatalf("the next import = %+v", good.Notification)
	}
}

// A tool's progress reaches the socket live, a call's start before its
// result, without a seq; it is not stored, so a resume replays the
// person's message and the answer and no tool frame.
func TestToolProgressIsLiveAndNotReplayed(t *testing.T) {
	t.Parallel()
	info := startUp(t)
	c := dial(t, info, info.DemoToken)
	c.send(`{"type":"message","id":"m1","conversation_id":"c1","text":"what did I spend this month?"}`)
	live := c.until(contracts.FrameAnswer)
	var order []string
	for _, f := range live {
		if f.Type == contracts.FrameToolStart || f.Type == contracts.FrameToolResult {
			order = append(order, f.Type)
			if f.Seq != 0 || f.Tool == nil || f.Tool.CallID == "" || f.TurnID == "" {
				t.Errorf("live tool frame %+v: want a call and a turn, and no seq", f)
			}
		}
	}
	if !slices.Equal(order, []string{contracts.FrameToolStart, contracts.FrameToolResult}) {
		t.Fatalf("tool frames on the socket: %v, want a start, then its result", order)
	}

	c2 := dial(t, info, info.DemoToken)
	c2.send(`{"type":"resume","after_seq":0}`)
	var replayed []string
	for _, f := range c2.until(contracts.FrameAnswer) {
		replayed = append(replayed, f.Type)
	}
	if !slices.Equal(replayed, []string{contracts.FrameUserMessage, contracts.FrameAnswer}) {
		t.Errorf("a resume replayed %v, want the message and the answer only", replayed)
	}
}

// until reads frames up to and including the first of type typ, skipping
// pongs, and fails after 20 s.
func (c *wsClient) until(typ string) []contracts.ServerFrame {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []contracts.ServerFrame
	for {
		f, _ := c.read(ctx, "a "+typ+" frame")
		if f.Type == contracts.FrameAck || f.Type == contracts.FramePong {
			continue
		}
		out = append(out, f)
		if f.Type == typ {
			return out
		}
	}
}
