package bus

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/ThreeDotsLabs/watermill"
)

func TestRouterLoggerLevelsAndFields(t *testing.T) {
	var buf bytes.Buffer
	l := newRouterLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))

	l.Info("Adding handler", watermill.LogFields{"handler": "turns"}) // watermill's Info is purser's Debug
	l.Debug("debug line", nil)
	l.Trace("Received message", watermill.LogFields{"uuid": "m1"})
	if buf.Len() != 0 {
		t.Fatalf("lines below Info were written: %s", buf.String())
	}

	l.With(watermill.LogFields{"service": "notifier"}).Error("Handler returned error", errors.New("boom"), watermill.LogFields{"handler": "agent"})
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("error line: %v (%s)", err, buf.String())
	}
	for k, want := range map[string]string{"level": "ERROR", "msg": "Handler returned error", "error": "boom", "handler": "agent", "service": "notifier"} {
		if line[k] != want {
			t.Errorf("%s = %v, want %q (line %s)", k, line[k], want, buf.String())
		}
	}

	buf.Reset()
	debug := newRouterLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: watermill.LevelTrace})))
	debug.Info("Adding handler", watermill.LogFields{"handler": "turns"})
	debug.Trace("Received message", watermill.LogFields{"uuid": "m1"})
	out := buf.String()
	if !strings.Contains(out, "level=DEBUG msg=\"Adding handler\" handler=turns") || !strings.Contains(out, "msg=\"Received message\" uuid=m1") {
		t.Fatalf("lines at Debug and Trace, enabled, were not written as expected:\n%s", out)
	}
}

// The router writes a Trace line for every message it handles: below the
// logger's level, such a line must cost no allocation.
func TestRouterLoggerDisabledLineAllocatesNothing(t *testing.T) {
	l := newRouterLogger(slog.New(slog.NewJSONHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelInfo})))
	fields := watermill.LogFields{"message_uuid": "m1", "topic": "purser.turns.0.t.c", "handler": "turns"}
	if n := testing.AllocsPerRun(100, func() { l.Trace("Received message", fields) }); n != 0 {
		t.Fatalf("a Trace line below the level allocated %v times", n)
	}
}
