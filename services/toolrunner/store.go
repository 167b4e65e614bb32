package toolrunner

import (
	"context"

	"github.com/purser-ai/purser/internal/store"
)

// sqlStore adapts *store.Store to Store: its transactions are *store.Store
// values, which already have every TxStore method.
type sqlStore struct{ *store.Store }

// FromStore serves the runner from the system of record.
func FromStore(st *store.Store) Store { return sqlStore{st} }

func (s sqlStore) InTx(ctx context.Context, fn func(tx TxStore) error) error {
	return s.Store.InTx(ctx, func(tx *store.Store) error { return fn(tx) })
}
