package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
)

func TestConformance(t *testing.T) {
	for _, e := range storetest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) *store.Store { return storetest.Open(t, e.DSN(t)) })
		})
	}
}

// Replicas that start together must all come up on one migrated schema.
func TestMigrateConcurrently(t *testing.T) {
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
