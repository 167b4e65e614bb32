package store

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"
)

// relayMessage is an outbox message as the orchestrator writes one.
func relayMessage(id string) OutboxMessage {
	return OutboxMessage{
		ID:      id,
		Subject: "purser.agent.acme.u17.c-42",
		Headers: map[string]string{
			"Purser-Conversation": "c-42", "Purser-Correlation-Id": "t8df2830bd7eab033e580cafef5314ed0",
			"Purser-Created-At": "2026-11-28T10:18:17.961590658Z", "Purser-Tenant": "acme", "Purser-Type": "answer",
			"Purser-User": "u17", "traceparent": "00-d2b8f1c5e898660cd5066d5416a82510-d5a4fa11673fdf62-01",
		},
		Payload: []byte(`{"turn_id":"t8df2830bd7eab033e580cafef5314ed0","content":"You spent £41.20 on groceries in November, across 6 expenses.",` +
			`"citations":[{"call_id":"cfdb5c7edbc99892c54f71262efa79f","tool":"get_balance"}]}`),
		CreatedAt: time.Date(2026, 11, 28, 10, 18, 17, 0, time.UTC),
	}
}

func TestOutboxRowsArePackedAndPublishedAsWritten(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	want := []OutboxMessage{relayMessage("m1"), relayMessage("m2")}
	want[1].Headers = nil // a message may have none
	if err := st.AppendOutbox(ctx, want); err != nil {
		t.Fatal(err)
	}
	got, err := st.PendingOutbox(ctx, 10)
	if err != nil || len(got) != 2 {
		t.Fatalf("pending = %d messages, %v; want 2", len(got), err)
	}
	for i := range want {
		if got[i].ID != want[i].ID || got[i].Subject != want[i].Subject || !maps.Equal(got[i].Headers, want[i].Headers) ||
			!bytes.Equal(got[i].Payload, want[i].Payload) {
			t.Errorf("message %d read back as %+v; want %+v", i, got[i], want[i])
		}
	}
	var headers string
	var stored int
	if err := st.queryRow(ctx, `SELECT headers, length(payload) FROM outbox WHERE id = 'm1'`).Scan(&headers, &stored); err != nil {
		t.Fatal(err)
	}
	h, _ := json.Marshal(want[0].Headers)
	// Rows of a bench run packed to 47% of their bytes.
	if plain := len(h) + len(want[0].Payload); headers != outboxPacked || stored*10 > plain*6 {
		t.Errorf("row stored with headers %q in %d bytes, of %d plain; want it packed in under 60%%", headers, stored, plain)
	}
}

func TestOutboxRowsStoredBeforeArePublishedAsTheyWere(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	m := relayMessage("old")
	h, _ := json.Marshal(m.Headers)
	if _, err := st.exec(ctx, `INSERT INTO outbox (id, subject, headers, payload, created_at) VALUES (?, ?, ?, ?, ?)`,
		m.ID, m.Subject, string(h), m.Payload, st.d.ts(m.CreatedAt)); err != nil {
		t.Fatal(err)
	}
	got, err := st.PendingOutbox(ctx, 10)
	if err != nil || len(got) != 1 || !maps.Equal(got[0].Headers, m.Headers) || !bytes.Equal(got[0].Payload, m.Payload) {
		t.Fatalf("a row stored plain read back as %+v, %v; want it as stored", got, err)
	}
}

func TestADamagedOutboxRowIsAnErrorNamingIt(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	m := relayMessage("m1")
	h, _ := json.Marshal(m.Headers)
	packed := packOutbox(h, m.Payload)
	if _, err := st.exec(ctx, `INSERT INTO outbox (id, subject, headers, payload, created_at) VALUES ('bad', 's', ?, ?, ?)`,
		outboxPacked, packed[:len(packed)-9], st.d.ts(m.CreatedAt)); err != nil {
		t.Fatal(err)
	}
	if got, err := st.PendingOutbox(ctx, 10); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("a damaged row read as %+v, %v; want an error naming it", got, err)
	}
}
