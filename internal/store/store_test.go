package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) *store.Store { return storetest.Open(t, e.DSN(t)) })
		})
	}
}

// Replicas that start together must all come up on one migrated schema.
func TestMigrateConcurrently(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			dsn := e.DSN(t)
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					st, err := store.Open(context.Background(), dsn)
					if err == nil {
						err = st.Close()
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatalf("concurrent start: %v", err)
				}
			}
			st := storetest.Open(t, dsn)
			if _, err := st.AddExpense(context.Background(), store.Expense{TenantID: "t", UserID: "u", Item: "x", AmountMinor: 1, Currency: "GBP", Date: "2026-01-01"}); err != nil {
				t.Fatalf("schema unusable after concurrent migration: %v", err)
			}
		})
	}
}

func TestOpenErrorsHidePassword(t *testing.T) {
	t.Parallel()
	_, err := store.Open(context.Background(), "postgres://purser:s3cr3t-pw@127.0.0.1:1/db?sslmode=disable&connect_timeout=1")
	if err == nil {
		t.Fatal("opened a store on a closed port")
	}
	if strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Fatalf("error leaks the password: %v", err)
	}
	if _, err := store.Open(context.Background(), "mysql://x"); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("unsupported dsn: %v", err)
	}
}

// A resent turn is answered with the frames it produced, however many
// frames the user has had since: frames stored before the upgrade that
// indexed them by turn are found too.
func TestFramesOfATurnFoundAfterUpgradeAndBehindNewerOnes(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := e.DSN(t)
			t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
			err := store.MigrateUpTo(ctx, dsn, 6, func(exec func(string, ...any) error) error {
				frame := func(seq int, payload string) error {
					return exec(`INSERT INTO frames (tenant_id, user_id, seq, event_id, payload, created_at, conversation_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
						"t1", "u1", seq, fmt.Sprintf("e%d", seq), []byte(payload), t0, "c1")
				}
				if err := frame(1, `{"type":"user_message","conversation_id":"c1","turn_id":"tA","at":"2026-11-01T09:00:00Z"}`); err != nil {
					return err
				}
				if err := frame(2, `{"type":"proposal","turn_id":"tA","proposal":{"proposal_id":"p1","turn_id":"tA"}}`); err != nil {
					return err
				}
				if err := frame(3, `not json`); err != nil {
					return err
				}
				for seq := 4; seq < 1300; seq++ {
					if err := frame(seq, `{"type":"answer","turn_id":"tB"}`); err != nil {
						return err
					}
				}
				return exec(`INSERT INTO frames (tenant_id, user_id, seq, event_id, payload, created_at, conversation_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
					"t1", "u2", 1, "x1", []byte(`{"type":"answer","turn_id":"tA"}`), t0, "c9")
			})
			if err != nil {
				t.Fatalf("database as the previous version left it: %v", err)
			}
			st := storetest.Open(t, dsn)
			frames, err := st.FramesOfTurn(ctx, "t1", "u1", "tA", 100)
			if err != nil {
				t.Fatal(err)
			}
			var seqs []int64
			for _, f := range frames {
				seqs = append(seqs, f.Seq)
			}
			if fmt.Sprint(seqs) != "[1 2]" {
				t.Fatalf("frames of tA behind 1,296 newer ones = %v, want [1 2]", seqs)
			}
			// Frames stored from now on are found by their turn too.
			for i, turn := range []string{"tC", "tD", "tC"} {
				if _, _, err := st.AppendConversationFrame(ctx, "t1", "u3", "c3", fmt.Sprintf("n%d", i), []byte(`{"type":"answer","turn_id":"`+turn+`"}`), t0); err != nil {
					t.Fatal(err)
				}
			}
			if frames, err := st.FramesOfTurn(ctx, "t1", "u3", "tC", 100); err != nil || len(frames) != 2 || frames[0].Seq != 1 || frames[1].Seq != 3 {
				t.Fatalf("frames of tC = %+v (err %v), want seqs 1 and 3", frames, err)
			}
		})
	}
}

// Expenses stored when ids counted per tenant keep their ids after the
// upgrade to per-user numbering. A user the tenant knew goes on from the
// tenant's last number, so that no id they deleted comes back; someone
// new starts at 1.
func TestExpenseIDsAfterUpgradeToPerUser(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := e.DSN(t)
			t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
			err := store.MigrateUpTo(ctx, dsn, 7, func(exec func(string, ...any) error) error {
				// Tenant t1 handed out 1..6: olga holds 1, 3 and 5, bob 2 and
				// 4, and bob deleted 6. Carol only chatted (a frame, and
				// Postgres's frame counter); erin is known by a counter alone.
				for _, x := range []struct {
					id   int64
					user string
				}{{1, "olga"}, {2, "bob"}, {3, "olga"}, {4, "bob"}, {5, "olga"}} {
					err := exec(`INSERT INTO expenses (tenant_id, id, user_id, item, amount_minor, currency, date, category, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
						"t1", x.id, x.user, fmt.Sprintf("%s-%d", x.user, x.id), 100*x.id, "GBP", "2026-11-01", "", t0, t0)
					if err != nil {
						return err
					}
				}
				if err := exec(`INSERT INTO counters (tenant_id, user_id, name, value) VALUES (?, ?, ?, ?)`, "t1", "", "expense", 6); err != nil {
					return err
				}
				if err := exec(`INSERT INTO frames (tenant_id, user_id, seq, event_id, payload, created_at, conversation_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
					"t1", "carol", 1, "e1", []byte(`{"type":"answer","turn_id":"tA"}`), t0, "c1"); err != nil {
					return err
				}
				if err := exec(`INSERT INTO counters (tenant_id, user_id, name, value) VALUES (?, ?, ?, ?)`, "t1", "carol", "frame", 1); err != nil {
					return err
				}
				return exec(`INSERT INTO counters (tenant_id, user_id, name, value) VALUES (?, ?, ?, ?)`, "t1", "erin", "frame", 1)
			})
			if err != nil {
				t.Fatalf("database as the previous version left it: %v", err)
			}
			st := storetest.Open(t, dsn)
			for _, x := range []struct {
				user string
				id   int64
			}{{"olga", 1}, {"bob", 2}, {"olga", 3}, {"bob", 4}, {"olga", 5}} {
				got, err := st.GetExpense(ctx, "t1", x.user, x.id)
				if err != nil || got.Item != fmt.Sprintf("%s-%d", x.user, x.id) {
					t.Errorf("%s's #%d after the upgrade = %+v, %v", x.user, x.id, got, err)
				}
			}
			if _, err := st.GetExpense(ctx, "t1", "bob", 1); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("bob reaches olga's #1 after the upgrade: %v", err)
			}
			for _, tt := range []struct {
				user string
				want int64
			}{{"olga", 7}, {"bob", 7}, {"carol", 7}, {"erin", 7}, {"dan", 1}, {"bob", 8}} {
				got, err := st.AddExpense(ctx, store.Expense{TenantID: "t1", UserID: tt.user, Item: "new", AmountMinor: 1, Currency: "GBP", Date: "2026-11-02"})
				if err != nil {
					t.Fatal(err)
				}
				if got.ID != tt.want {
					t.Errorf("%s's next id = %d, want %d", tt.user, got.ID, tt.want)
				}
			}
			// Other counters are untouched.
			if seq, _, err := st.AppendConversationFrame(ctx, "t1", "carol", "c1", "n1", []byte(`{"type":"answer","turn_id":"tX"}`), t0); err != nil || seq != 2 {
				t.Errorf("carol's next frame = %d, %v; want seq 2", seq, err)
			}
		})
	}
}

// Conversations stored when ids were the tenant's keep their state and
// their user after the upgrade to per-user conversations, running turns
// stay due for the sweep, and another user of the tenant may then start a
// conversation of the same id without touching the first.
func TestConversationsAfterUpgradeToPerUser(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			dsn := e.DSN(t)
			t0 := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
			due := t0.Add(time.Minute)
			err := store.MigrateUpTo(ctx, dsn, 8, func(exec func(string, ...any) error) error {
				// Bob took "chat-olga" first; olga chats in "c1".
				for _, c := range []struct {
					conv, user string
					deadline   any
				}{{"chat-olga", "bob", due}, {"c1", "olga", nil}} {
					err := exec(`INSERT INTO conversations (tenant_id, conversation_id, user_id, version, state, updated_at, deadline_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
						"t1", c.conv, c.user, 3, `{"user_id":"`+c.user+`"}`, t0, c.deadline)
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
			for _, tt := range []struct{ user, conv string }{{"bob", "chat-olga"}, {"olga", "c1"}} {
				got, err := st.LoadConversation(ctx, "t1", tt.user, tt.conv)
				if err != nil || got.Version != 3 || string(got.State) != `{"user_id":"`+tt.user+`"}` {
					t.Errorf("%s's %s after the upgrade = %+v, %v", tt.user, tt.conv, got, err)
				}
			}
			if _, err := st.LoadConversation(ctx, "t1", "olga", "chat-olga"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("olga finds bob's chat-olga after the upgrade: %v", err)
			}
			list, err := st.DueConversations(ctx, due.Add(time.Second), 10)
			if err != nil || len(list) != 1 || list[0].UserID != "bob" || list[0].ConversationID != "chat-olga" {
				t.Errorf("due after the upgrade = %+v, %v; want bob's chat-olga", list, err)
			}
			olga := store.Conversation{TenantID: "t1", UserID: "olga", ConversationID: "chat-olga", State: []byte(`{"user_id":"olga"}`), UpdatedAt: t0}
			if v, err := st.SaveConversation(ctx, olga, 0, nil); err != nil || v != 1 {
				t.Fatalf("olga's own chat-olga = %d, %v; want version 1", v, err)
			}
			if got, err := st.LoadConversation(ctx, "t1", "bob", "chat-olga"); err != nil || got.Version != 3 {
				t.Errorf("bob's chat-olga after olga's = %+v, %v; want it unchanged", got, err)
			}
		})
	}
}
