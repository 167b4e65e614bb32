package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

// A refreshed token replaces the stored one only if nothing replaced it
// meanwhile; a broken one is deleted only if it is still the one stored.
func TestMailTokenReplaceAndDelete(t *testing.T) {
	t.Parallel()
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, e.DSN(t))
			at := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
			if err := st.PutMailToken(ctx, "t1", "u1", []byte("old"), at); err != nil {
				t.Fatal(err)
			}
			if err := st.PutMailToken(ctx, "t1", "u2", []byte("other"), at); err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				name string
				op   func() (bool, error)
				want bool
				give string // the token stored for t1/u1 afterwards, "" for none
			}{
				{"replace a stale token", func() (bool, error) { return st.ReplaceMailToken(ctx, "t1", "u1", []byte("stale"), []byte("new"), at) }, false, "old"},
				{"replace the stored token", func() (bool, error) { return st.ReplaceMailToken(ctx, "t1", "u1", []byte("old"), []byte("new"), at) }, true, "new"},
				{"delete a stale token", func() (bool, error) { return st.DeleteMailTokenIf(ctx, "t1", "u1", []byte("old")) }, false, "new"},
				{"delete the stored token", func() (bool, error) { return st.DeleteMailTokenIf(ctx, "t1", "u1", []byte("new")) }, true, ""},
				{"delete again", func() (bool, error) { return st.DeleteMailToken(ctx, "t1", "u1") }, false, ""},
			}
			for _, tt := range tests {
				got, err := tt.op()
				if err != nil || got != tt.want {
					t.Fatalf("%s = %v, %v; want %v", tt.name, got, err, tt.want)
				}
				stored, err := st.GetMailToken(ctx, "t1", "u1")
				switch {
				case tt.give == "" && !errors.Is(err, store.ErrNotFound):
					t.Fatalf("%s: token left %q, %v", tt.name, stored, err)
				case tt.give != "" && string(stored) != tt.give:
					t.Fatalf("%s: stored %q, %v; want %q", tt.name, stored, err, tt.give)
				}
			}
			if ok, err := st.DeleteMailToken(ctx, "t1", "u2"); !ok || err != nil {
				t.Fatalf("delete u2 = %v, %v", ok, err)
			}
			if _, err := st.GetMailToken(ctx, "t1", "u2"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("u2 after delete: %v", err)
			}
		})
	}
}
