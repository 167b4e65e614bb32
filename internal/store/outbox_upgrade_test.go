package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// The outbox as version 21 left it, published and pending messages
// alike, comes through the change of its id index (migration 22) whole:
// what waited still waits, in the order it was stored, and is still not
// queued twice; what was published is still pruned by age. Stored again
// once published, a message is queued again: JetStream's duplicate
// window and its consumers drop the copy by its id.
func TestOutboxKeepsItsMessagesThroughTheUpgrade(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := e.DSN(t)
			t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
			err := store.MigrateUpTo(ctx, dsn, 21, func(exec func(string, ...any) error) error {
				for i := range 6 {
					var published any
					if i%2 == 0 {
						published = t0
					}
					err := exec(`INSERT INTO outbox (id, subject, payload, created_at, published_at) VALUES (?, ?, ?, ?, ?)`,
						fmt.Sprintf("m%d", i), "purser.agent.t.u.c", []byte{byte(i)}, t0, published)
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("database as the previous version left it: %v", err)
			}
			st := storetest.Open(t, dsn)
			pendingIDs := func() []string {
				t.Helper()
				pending, err := st.PendingOutbox(ctx, 100)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				for _, m := range pending {
					ids = append(ids, m.ID)
				}
				return ids
			}
			if got := fmt.Sprint(pendingIDs()); got != "[m1 m3 m5]" {
				t.Fatalf("pending after the upgrade: %s, want [m1 m3 m5]", got)
			}
			again := func(id string) store.OutboxMessage {
				return store.OutboxMessage{ID: id, Subject: "purser.agent.t.u.c", Payload: []byte("again"), CreatedAt: t0.Add(time.Minute)}
			}
			if err := st.AppendOutbox(ctx, []store.OutboxMessage{again("m3"), again("m7")}); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(pendingIDs()); got != "[m1 m3 m5 m7]" {
				t.Fatalf("pending after storing m3 again and m7: %s, want m3 once", got)
			}
			if err := st.AppendOutbox(ctx, []store.OutboxMessage{again("m0")}); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(pendingIDs()); got != "[m1 m3 m5 m7 m0]" {
				t.Fatalf("pending after storing the published m0 again: %s, want it queued again", got)
			}
			n, err := st.PruneOutbox(ctx, t0.Add(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if n != 3 {
				t.Fatalf("pruned %d, want the 3 published before the upgrade", n)
			}
			if got := fmt.Sprint(pendingIDs()); got != "[m1 m3 m5 m7 m0]" {
				t.Fatalf("pending after pruning: %s", got)
			}
		})
	}
}
