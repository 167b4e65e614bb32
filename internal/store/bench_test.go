package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/purser-ai/purser/internal/store"
)

// BenchmarkReads times the reads a turn makes most often, on SQLite: the
// notifier's look-up of a turn's frames and the expense listing of a read
// question. A LIMIT bound as a parameter made SQLite compile such a
// statement again on every run: half of FramesOfTurn's time, a quarter of
// ListExpenses'.
func BenchmarkReads(b *testing.B) {
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(b.TempDir(), "bench.db")
	if err := store.Migrate(ctx, dsn); err != nil {
		b.Fatal(err)
	}
	s, err := store.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	for i := range 40 {
		payload := fmt.Appendf(nil, `{"type":"answer","turn_id":"turn-%d"}`, i%8)
		if _, _, err := s.AppendFrame(ctx, "t", "u", fmt.Sprintf("ev-%d", i), payload, now); err != nil {
			b.Fatal(err)
		}
		e := store.Expense{TenantID: "t", UserID: "u", Item: "coffee", AmountMinor: 350, Currency: "GBP",
			Date: now.AddDate(0, 0, -i).Format(time.DateOnly), Category: "food"}
		if _, err := s.AddExpense(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("FramesOfTurn", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.FramesOfTurn(ctx, "t", "u", fmt.Sprintf("turn-%d", i%8), 200); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ListExpenses", func(b *testing.B) {
		f := store.ExpenseFilter{TenantID: "t", UserID: "u", From: now.AddDate(0, 0, -30).Format(time.DateOnly), Limit: 100}
		for b.Loop() {
			if _, err := s.ListExpenses(ctx, f); err != nil {
				b.Fatal(err)
			}
		}
	})
}
