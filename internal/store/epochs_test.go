package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// A user's settings epoch moves on with every change of their settings,
// made alone or inside another transaction, committed or not; on
// Postgres, where other processes write, the store gives none.
func TestSettingsEpochMovesWithEveryChange(t *testing.T) {
	storetest.OnEach(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		epoch := func() uint64 {
			t.Helper()
			n, ok := st.SettingsEpoch("t1", "u1")
			if ok != (st.Dialect() == "sqlite") {
				t.Fatalf("SettingsEpoch known = %v on %s", ok, st.Dialect())
			}
			return n
		}
		if st.Dialect() != "sqlite" {
			epoch()
			return
		}
		e0 := epoch()
		if _, err := st.GetUserSettings(ctx, "t1", "u1"); err != nil {
			t.Fatal(err)
		}
		if e := epoch(); e != e0 {
			t.Fatalf("a read moved the epoch from %d to %d", e0, e)
		}
		if _, err := st.PutUserSettings(ctx, store.UserSettings{TenantID: "t1", UserID: "u1", Currency: "EUR"}); err != nil {
			t.Fatal(err)
		}
		e1 := epoch()
		if e1 == e0 {
			t.Fatal("a change of the settings left the epoch where it was")
		}
		if err := st.InTx(ctx, func(tx *store.Store) error {
			if _, err := tx.PutUserSettings(ctx, store.UserSettings{TenantID: "t1", UserID: "u1", Currency: "JPY"}); err != nil {
				return err
			}
			if e := epoch(); e == e1 {
				t.Error("a change inside a transaction did not move the epoch before its commit")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		e2 := epoch()
		if e2 == e1 {
			t.Fatal("a change committed inside a transaction left the epoch where it was")
		}
		boom := errors.New("boom")
		if err := st.InTx(ctx, func(tx *store.Store) error {
			if _, err := tx.PutUserSettings(ctx, store.UserSettings{TenantID: "t1", UserID: "u1", Currency: "USD"}); err != nil {
				return err
			}
			return boom
		}); !errors.Is(err, boom) {
			t.Fatalf("InTx = %v, want boom", err)
		}
		if e := epoch(); e == e2 {
			t.Error("a change rolled back left the epoch where it was (a read in between could have seen it)")
		}
		u, err := st.GetUserSettings(ctx, "t1", "u1")
		if err != nil || u.Currency != "JPY" {
			t.Fatalf("settings %+v, %v: want the currency JPY", u, err)
		}
	})
}
