package store

import (
	"bytes"
	"context"
	"testing"
	"time"
)

func TestAFrameIsStoredPackedAndReadBackWhole(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	payload := []byte(`{"type":"answer","conversation_id":"c1","turn_id":"t8df2830bd7eab033e580cafef5314ed0","at":"2026-11-28T10:27:35.726565498Z",` +
		`"answer":{"turn_id":"t8df2830bd7eab033e580cafef5314ed0","content":"You spent £41.20 on groceries in November.","citations":[{"call_id":"c6","tool":"get_balance"}]}}`)
	seq, _, err := st.AppendConversationFrame(ctx, "t1", "u1", "c1", "e1", payload, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := st.queryRow(ctx, `SELECT payload FROM frames WHERE tenant_id = 't1' AND user_id = 'u1' AND seq = ?`, seq).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !isPacked(stored) || len(stored)*2 > len(payload) {
		t.Errorf("a payload of %d bytes stored in %d, packed %v; want it packed in under half", len(payload), len(stored), isPacked(stored))
	}
	after, err := st.FramesAfter(ctx, "t1", "u1", 0, 10)
	if err != nil || len(after) != 1 || !bytes.Equal(after[0].Payload, payload) {
		t.Fatalf("frames after 0 = %+v, %v; want the payload as appended", after, err)
	}
	page, err := st.ConversationFrames(ctx, "t1", "u1", "c1", 0, 10)
	if err != nil || len(page) != 1 || !bytes.Equal(page[0].Payload, payload) {
		t.Fatalf("the conversation's frames = %+v, %v; want the payload as appended", page, err)
	}
	turn, err := st.FramesOfTurn(ctx, "t1", "u1", "t8df2830bd7eab033e580cafef5314ed0", 10)
	if err != nil || len(turn) != 1 || !bytes.Equal(turn[0].Payload, payload) {
		t.Fatalf("the turn's frames = %+v, %v; want the payload as appended (its turn read before packing)", turn, err)
	}
}

func TestAFrameStoredPlainBeforeIsReadAsItWas(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	payload := []byte(`{"type":"user_message","conversation_id":"c1","turn_id":"t1","user_message":{"text":"stored before frames were packed"}}`)
	if _, err := st.exec(ctx, `INSERT INTO frames (tenant_id, user_id, seq, event_id, payload, created_at, conversation_id, turn_id)
		VALUES ('t1', 'u1', 1, 'e1', ?, '2026-11-01T09:00:00Z', 'c1', 't1')`, payload); err != nil {
		t.Fatal(err)
	}
	got, err := st.FramesAfter(ctx, "t1", "u1", 0, 10)
	if err != nil || len(got) != 1 || !bytes.Equal(got[0].Payload, payload) {
		t.Fatalf("a frame stored plain = %+v, %v; want it as stored", got, err)
	}
	// A short payload is stored as it is.
	if _, _, err := st.AppendFrame(ctx, "t1", "u1", "e2", []byte(`{"type":"ack"}`), time.Now()); err != nil {
		t.Fatal(err)
	}
	var stored []byte
	if err := st.queryRow(ctx, `SELECT payload FROM frames WHERE tenant_id = 't1' AND user_id = 'u1' AND seq = 2`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if string(stored) != `{"type":"ack"}` {
		t.Errorf("a short payload stored as %q; want it as it is", stored)
	}
}

func TestADamagedPackedFrameIsAnErrorNotAFrame(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	packed := framePacker.pack(bytes.Repeat([]byte(`{"type":"answer","answer":{"content":"x"}}`), 4))
	if _, err := st.exec(ctx, `INSERT INTO frames (tenant_id, user_id, seq, event_id, payload, created_at, conversation_id, turn_id)
		VALUES ('t1', 'u1', 1, 'e1', ?, '2026-11-01T09:00:00Z', 'c1', '')`, packed[:len(packed)-5]); err != nil {
		t.Fatal(err)
	}
	if got, err := st.FramesAfter(ctx, "t1", "u1", 0, 10); err == nil {
		t.Fatalf("a damaged frame read as %+v; want an error", got)
	}
}
