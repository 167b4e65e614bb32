package store

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bigState is a conversation's state of about n bytes of JSON, shaped as
// the orchestrator's: a history of turns, each with its own words.
func bigState(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"user_id":"u1","history":[`)
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"role":"assistant","text":"You spent £%d.%02d on item %d this month.","turn_id":"t%032x","at":"2026-11-28T10:08:%02d.868466768Z"}`,
			i*7%100, i*13%100, i, uint64(i)*0x9e3779b97f4a7c15, i%60)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

func openSQLiteForTest(t *testing.T) *Store {
	t.Helper()
	st, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "purser.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// storedState is how the row's state sits in the file: its type and size.
func storedState(t *testing.T, st *Store, user, conv string) (string, int) {
	t.Helper()
	var typ string
	var n int
	if err := st.queryRow(context.Background(), `SELECT typeof(state), length(CAST(state AS BLOB)) FROM conversations
		WHERE tenant_id = 't1' AND user_id = ? AND conversation_id = ?`, user, conv).Scan(&typ, &n); err != nil {
		t.Fatal(err)
	}
	return typ, n
}

func TestALargeStateIsStoredPackedAndReadBackWhole(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	first, second := bigState(1600), bigState(3000)
	c := Conversation{TenantID: "t1", UserID: "u1", ConversationID: "c1", State: first, UpdatedAt: t0}
	v, err := st.SaveConversation(ctx, c, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := st.LoadConversation(ctx, "t1", "u1", "c1"); err != nil || !bytes.Equal(got.State, first) {
		t.Fatalf("state read back = %.80q…, %v; want what was saved", got.State, err)
	}
	// 1,600 bytes of JSON took a leaf and an overflow page of 1 KiB; the
	// packed state must fit the leaf.
	if typ, n := storedState(t, st, "u1", "c1"); typ != "blob" || n > 900 {
		t.Errorf("state of %d bytes stored as %s of %d bytes; want a packed blob under 900", len(first), typ, n)
	}
	c.State = second
	if _, err := st.SaveConversation(ctx, c, v, nil); err != nil {
		t.Fatal(err)
	}
	got, _, err := st.LoadConversationIfChanged(ctx, "t1", "u1", "c1", 0)
	if err != nil || !bytes.Equal(got.State, second) || got.Version != v+1 {
		t.Fatalf("state after an update = version %d, %.80q…, %v; want version %d and the new state", got.Version, got.State, err, v+1)
	}
}

func TestAStateStoredAsTextBeforeIsReadAsItWas(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	old := bigState(2000)
	if _, err := st.exec(ctx, `INSERT INTO conversations (tenant_id, user_id, conversation_id, version, state, updated_at)
		VALUES ('t1', 'u1', 'old', 4, ?, '2026-11-01T09:00:00Z')`, string(old)); err != nil {
		t.Fatal(err)
	}
	got, err := st.LoadConversation(ctx, "t1", "u1", "old")
	if err != nil || got.Version != 4 || !bytes.Equal(got.State, old) {
		t.Fatalf("a state stored as text = version %d, %.80q…, %v; want it as stored", got.Version, got.State, err)
	}
	// A small state is stored as text, as it always was.
	small := Conversation{TenantID: "t1", UserID: "u1", ConversationID: "small", State: []byte(`{"user_id":"u1"}`)}
	if _, err := st.SaveConversation(ctx, small, 0, nil); err != nil {
		t.Fatal(err)
	}
	if typ, _ := storedState(t, st, "u1", "small"); typ != "text" {
		t.Errorf("a small state is stored as %s; want text", typ)
	}
}

func TestADamagedPackedStateIsAnErrorNotAState(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	packed := st.stateArg(bigState(1600)).([]byte)
	damaged := append(append([]byte(nil), packed[:len(packed)/2]...), bytes.Repeat([]byte{0xff}, 40)...)
	if _, err := st.exec(ctx, `INSERT INTO conversations (tenant_id, user_id, conversation_id, version, state, updated_at)
		VALUES ('t1', 'u1', 'bad', 1, ?, '2026-11-01T09:00:00Z')`, damaged); err != nil {
		t.Fatal(err)
	}
	if got, err := st.LoadConversation(ctx, "t1", "u1", "bad"); err == nil {
		t.Fatalf("a damaged state loaded as %.80q…; want an error", got.State)
	}
}
