package app

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Every log line purser up writes in these tests, at debug level, is kept
// and searched when the test ends: no token, secret, key or mail body may
// appear in any of them.

// mailBodies are phrases from the bodies of the demo mailbox's messages
// (and the tests' own); logs may name a message, never quote it.
var mailBodies = []string{
	"Ignore previous instructions",
	"SYSTEM NOTE TO THE ASSISTANT",
	"See attached.",
}

type logWatch struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	secrets []string
}

// watchLogs collects t's logs; the caller checks them at the end.
func watchLogs(t *testing.T) *logWatch {
	w := &logWatch{}
	watches.Store(t, w)
	t.Cleanup(func() { watches.Delete(t) })
	return w
}

// watches finds a test's log watch, so tokens a test mints can be added.
var watches sync.Map // *testing.T -> *logWatch

// forbidInLogs adds secrets a test made (a token it minted, a key it set).
func forbidInLogs(t *testing.T, secrets ...string) {
	if w, ok := watches.Load(t); ok {
		w.(*logWatch).forbid(secrets...)
	}
}

func (w *logWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *logWatch) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func (w *logWatch) forbid(secrets ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, s := range secrets {
		if len(s) >= 8 { // shorter strings would match by chance
			w.secrets = append(w.secrets, s)
		}
	}
}

// check fails t for every log line that holds a secret or a mail body. A
// test that logged nothing would prove nothing, so that fails too.
func (w *logWatch) check(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	text := w.buf.String()
	if !strings.Contains(text, `"level":"DEBUG"`) || !strings.Contains(text, `"level":"INFO"`) {
		t.Errorf("purser up logged no debug and info lines; the log check would prove nothing")
	}
	for _, line := range strings.Split(text, "\n") {
		for _, s := range w.secrets {
			if strings.Contains(line, s) {
				t.Errorf("a log line holds a secret (%d characters, starting %q): %.200s", len(s), s[:4], line)
			}
		}
		for _, b := range mailBodies {
			if strings.Contains(line, b) {
				t.Errorf("a log line quotes a mail body (%q): %.200s", b, line)
			}
		}
	}
}
