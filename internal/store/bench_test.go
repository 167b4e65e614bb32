package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/procfs"
	"github.com/purser-ai/purser/internal/bench"
	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/internal/store/storetest"
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

// BenchmarkFramesAtOnce times a frame stored while many users' frames are
// being stored at once, on SQLite with its one writer: the shared commits,
// the counter and the frame's indexes, on a database already holding
// 40,000 frames of 1,000 users, as a busy purser's does. Each op is one
// frame, committed.
func BenchmarkFramesAtOnce(b *testing.B) {
	ctx := context.Background()
	s := benchSQLite(b)
	const users = 1000
	frame := func(i int) (user, conv, event string, payload []byte) {
		u := i % users
		turn := fmt.Sprintf("%08x-5c1e-4f0a-9d2b-%012x", i/3, u)
		payload = fmt.Appendf(nil, `{"type":"answer","turn_id":%q,"conversation_id":"c-%04d","text":"You spent £%d.%02d on coffee in the last 30 days, over %d purchases; the largest was £4.20 on 3 November."}`,
			turn, u, i%100, i%97, i%13)
		return fmt.Sprintf("u%04d", u), fmt.Sprintf("c-%04d", u), fmt.Sprintf("ev-%d", i), payload
	}
	var next atomic.Int64
	store1 := func() error {
		user, conv, event, payload := frame(int(next.Add(1)))
		_, _, err := s.AppendConversationFrame(ctx, "bench", user, conv, event, payload, time.Now())
		return err
	}
	atOnce(b, store1, &next, 40_000, 16, 32) // many handlers at once, as under load
}

// atOnce fills the database first, running op from workers goroutines
// until next reaches fill, then times op run by parallelism goroutines per
// CPU at once.
func atOnce(b *testing.B, op func() error, next *atomic.Int64, fill int64, workers, parallelism int) {
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Load() < fill {
				if err := op(); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.SetParallelism(parallelism)
	b.ResetTimer()
	cpu, written := bench.ProcessCPU(), processWritten()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	// ns/op is the wall time per op with many at once: on SQLite, the one
	// writer's capacity. cpu-ns/op is what an op costs this process's
	// CPUs (on Postgres, not the server's), the figure to hold against a
	// machine's cores.
	b.ReportMetric(float64(bench.ProcessCPU()-cpu)/float64(b.N), "cpu-ns/op")
	// written-B/op is what an op caused this process to write to storage
	// (on SQLite, the log and the checkpoints' copies into the file).
	if w := processWritten(); w >= 0 && written >= 0 {
		b.ReportMetric(float64(w-written)/float64(b.N), "written-B/op")
	}
}

// processWritten is what this process has caused to be written to storage
// so far (/proc/self/io: write_bytes less cancelled_write_bytes), or -1
// where the system does not say.
func processWritten() int64 {
	p, err := procfs.Self()
	if err != nil {
		return -1
	}
	io, err := p.IO()
	if err != nil {
		return -1
	}
	return int64(io.WriteBytes) - io.CancelledWriteBytes
}

// BenchmarkTurnWrites times the writes of a turn while many turns are
// written at once, as at 1,000 users, on SQLite with its one writer, on
// Postgres with its pipeline, and on Postgres with every write a round
// trip and a commit of its own (as before the pipeline): the
// user's message (a frame and the conversation's touch), the
// conversation's state (about 4 KB, with two outbox rows), two frames of
// the answer, and the outbox rows marked published. Each op is one turn's
// writes, each committed. The database holds 1,000 users' conversations
// and 40,000 frames first.
func BenchmarkTurnWrites(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { turnWrites(b, benchSQLite(b)) })
	b.Run("postgres", func(b *testing.B) { turnWrites(b, storetest.Open(b, storetest.PostgresDSN(b))) })
	b.Run("postgres-one-by-one", func(b *testing.B) {
		turnWrites(b, storetest.Open(b, storetest.PostgresDSN(b), store.WithoutPipeline()))
	})
}

func turnWrites(b *testing.B, s *store.Store) {
	ctx := context.Background()
	const users = 1000
	state := make([]byte, 0, 4096)
	state = append(state, `{"history":[`...)
	for i := range 24 {
		if i > 0 {
			state = append(state, ',')
		}
		state = fmt.Appendf(state, `{"role":"user","text":"how much did I spend on coffee in the last 30 days, entry %02d?","turn_id":"%08x-5c1e-4f0a-9d2b-000000000000"}`, i, i)
	}
	state = append(state, `]}`...)
	versions := make([]atomic.Int64, users)
	var busy [users]sync.Mutex // one turn of a conversation at a time, as its lane
	var next atomic.Int64
	turn := func() error {
		i := next.Add(1)
		u := int(i % users)
		busy[u].Lock()
		defer busy[u].Unlock()
		tenant, user, conv := fmt.Sprintf("t%03d", u/10), fmt.Sprintf("u%04d", u), fmt.Sprintf("c-%04d", u)
		turnID := fmt.Sprintf("%08x-5c1e-4f0a-9d2b-%012x", i, u)
		frame := func(kind string) []byte {
			return fmt.Appendf(nil, `{"type":%q,"turn_id":%q,"conversation_id":%q,"text":"You spent £%d.%02d on coffee in the last 30 days."}`,
				kind, turnID, conv, i%100, i%97)
		}
		now := time.Now()
		if _, _, err := s.AppendUserMessage(ctx, tenant, user, conv, "in-"+turnID, "coffee", frame("user_message"), now); err != nil {
			return err
		}
		out := []store.OutboxMessage{
			{ID: "tool-" + turnID, Subject: "purser.tools.request." + tenant, Payload: frame("tool_start"), CreatedAt: now},
			{ID: "answer-" + turnID, Subject: "purser.agent." + tenant, Payload: frame("answer"), CreatedAt: now},
		}
		v := versions[u].Load()
		c := store.Conversation{TenantID: tenant, ConversationID: conv, UserID: user, State: state, UpdatedAt: now}
		nv, err := s.SaveConversation(ctx, c, v, out)
		if err != nil {
			return err
		}
		versions[u].Store(nv)
		for _, kind := range []string{"tool_start", "answer"} {
			if _, _, err := s.AppendConversationFrame(ctx, tenant, user, conv, kind+"-"+turnID, frame(kind), now); err != nil {
				return err
			}
		}
		return s.MarkPublished(ctx, []string{out[0].ID, out[1].ID}, now)
	}
	atOnce(b, turn, &next, 10_000, 32, 128) // a busy purser's handlers: the writer's batches fill
}

// benchSQLite opens a SQLite store in a file of the benchmark's own,
// closed when it ends.
func benchSQLite(b *testing.B) *store.Store {
	s, err := store.Open(context.Background(), "sqlite:"+filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
