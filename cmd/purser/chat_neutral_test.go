package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/app"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/toolrunner/mailbox"
)

// terminalSafe fails t when what the terminal printed holds an escape
// (ESC or the C1 CSI), a carriage return, another control character but
// tab and line feed, or a bidi control.
func terminalSafe(t *testing.T, printed string) {
	t.Helper()
	for i, r := range printed {
		if r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r < 0xa0 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Errorf("the terminal printed %U at byte %d:\n%q", r, i, printed)
			return
		}
	}
}

// Whatever a server sends, the terminal prints no control sequence: raw
// escapes in every kind of frame are dropped, and quoted text shows
// without its backslashes.
func TestChatPrintsNoControlSequence(t *testing.T) {
	s, typed, printed, done := startChat(t)
	at := time.Now().UTC()
	c := s.next()
	const raw = "\x1b[8m\x1b]8;;https://evil.example\x07\u009b2J\r\u202egnp.exe\u2066"
	frames := []contracts.ServerFrame{
		{Type: contracts.FrameAnswer, Seq: 1, At: at, Answer: &contracts.Answer{TurnID: "t1", Content: "answer " + raw}},
		{Type: contracts.FrameClarify, Seq: 2, At: at, Clarify: &contracts.Clarify{TurnID: "t1", Question: "question " + raw}},
		{Type: contracts.FrameProposal, Seq: 3, At: at, Proposal: &contracts.Proposal{ProposalID: "p1", TurnID: "t1", Tool: "fetch_email_attachments",
			Summary: `Import a.csv, sent by \[click\](https\://evil.example) \<x@evil.example\> ` + raw + `?`, ExpiresAt: at.Add(time.Hour)}},
		{Type: contracts.FrameToolStart, Seq: 4, At: at, Tool: &contracts.ToolProgress{CallID: "c1", Tool: "tool" + raw, Status: "started"}},
		{Type: contracts.FrameNotification, Seq: 5, At: at, Notification: &contracts.Notification{ID: "n1", Kind: "info", Title: "t", Body: "body " + raw, CreatedAt: at}},
		{Type: contracts.FrameError, Seq: 6, At: at, Error: &contracts.ErrorBody{Code: "internal", Message: "error " + raw}},
	}
	for _, f := range frames {
		f.ConversationID = "c1"
		writeFrame(t, c, f)
	}
	waitFor(t, "the error printed", func() bool { return strings.Contains(printed(), "error: error") })
	endInput(t, typed, done, "nothing was typed")
	out := printed()
	terminalSafe(t, out)
	for _, want := range []string{"purser: answer [8m]8;;https://evil.example2J\ngnp.exe", "purser asks: question [8m",
		`purser proposes: Import a.csv, sent by [click](https://evil.example) <x@evil.example> [8m`, "[notification] body [8m"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal printed\n%s\nwithout %q", out, want)
		}
	}
}

// purser chat against purser up, with a hostile statement mail in the
// mailbox: its subject holds ESC[8m, its sender name a markdown link and
// its file name a right-to-left override. The proposal shows all of it as
// text, with the real sender and the warning after it.
func TestChatShowsAHostileMailAsText(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	if err := mailbox.WriteDemo(dir, app.DemoTenant, app.DemoUser, now); err != nil {
		t.Fatal(err)
	}
	eml := "From: \"[click](https://evil.example)\" <statements@evil.example>\r\n" +
		"Subject: Your Evil Bank statement =?utf-8?q?=1B[8m_is_ready?=\r\n" +
		"Date: " + now.Add(-time.Hour).Format(time.RFC1123Z) + "\r\n" +
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nYour statement is attached.\r\n" +
		"--b\r\nContent-Type: text/csv\r\nContent-Disposition: attachment; filename*=utf-8''statement%E2%80%AEfdp.csv\r\n\r\n" +
		"Date,Description,Amount,Currency\r\n2026-01-05,TESCO,-12.50,GBP\r\n--b--\r\n"
	if err := os.WriteFile(filepath.Join(dir, app.DemoTenant, app.DemoUser, "97-evil.eml"), []byte(eml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.FromEnv(func(string) string { return "" })
	cfg.DataDir, cfg.MailboxDir = t.TempDir(), dir
	cfg.HTTPAddr, cfg.NATSListen = "127.0.0.1:0", "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	ready, stopped := make(chan app.Info, 1), make(chan error, 1)
	go func() { stopped <- app.Up(ctx, cfg, slog.New(slog.DiscardHandler), func(i app.Info) { ready <- i }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("Up at shutdown: %v", err)
		}
	})
	var info app.Info
	select {
	case info = <-ready:
	case err := <-stopped:
		t.Fatalf("Up: %v", err)
	}

	in, typed := io.Pipe()
	out := &lockedWriter{w: &strings.Builder{}}
	printed := func() string {
		out.mu.Lock()
		defer out.mu.Unlock()
		return out.w.(*strings.Builder).String()
	}
	done := make(chan error, 1)
	go func() { done <- chat(ctx, chatClient(info.WebsocketURL(), info.DemoToken), in, out, "c1", "UTC") }()

	const sender = `"[click](https://evil.example)" <statements@evil.example>`
	fmt.Fprintln(typed, "Search my mail for the Evil Bank statement")
	waitFor(t, "the search answer", func() bool {
		select {
		case err := <-done:
			t.Fatalf("chat ended: %v; printed %q", err, printed())
		default:
		}
		return strings.Contains(printed(), "Say \"import the first one\"")
	})
	fmt.Fprintln(typed, "Find my Evil Bank statement and process it")
	waitFor(t, "the proposal", func() bool { return strings.Contains(printed(), "(yes/no)") })
	fmt.Fprintln(typed, "yes")
	waitFor(t, "the import's notification", func() bool { return strings.Contains(printed(), "[notification]") })
	endInput(t, typed, done, "every frame was acked")

	got := printed()
	terminalSafe(t, got)
	for _, want := range []string{
		`"Your Evil Bank statement [8m is ready" from ` + sender + " (statementfdp.csv)",
		`purser proposes: Import statementfdp.csv from "Your Evil Bank statement [8m is ready"`,
		"sent by " + sender + "? statementfdp.csv: 1 transaction",
		"You have never imported a statement from this sender before",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the terminal printed\n%s\nwithout %q", got, want)
		}
	}
}
