package orchestrator_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/store/storetest"
	"github.com/purser-ai/purser/internal/systest"
	"github.com/purser-ai/purser/pkg/contracts"
	"github.com/purser-ai/purser/services/orchestrator"
)

// BenchmarkTurn is the loop's own cost per turn: a turn published on
// TURNS until the event that ends it is on AGENT, with the offline model
// and no tools, one turn at a time (load, decide, save state and outbox,
// publish): "hello" ends with an Answer, an expense to add with a
// Proposal, stored with the conversation. Compare with BenchmarkHop in
// internal/bus, one bare bus hop.
func BenchmarkTurn(b *testing.B) {
	turns := []struct{ name, text, ends string }{
		{"hello", "hello", contracts.TypeAnswer},
		{"add", "add coffee 3.50 GBP today", contracts.TypeProposal},
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, turn := range turns {
			b.Run(engine+"/"+turn.name, func(b *testing.B) { benchTurn(b, engine, turn.text, turn.ends) })
		}
	}
}

func benchTurn(b *testing.B, engine, text, ends string) {
	dsn := storetest.SQLiteDSN(b)
	if engine == "postgres" {
		dsn = storetest.PostgresDSN(b)
	}
	s := systest.Start(b, systest.Options{DSN: dsn, Orchestrators: 1})
	answers := make(chan struct{}, 1)
	sub, err := s.NC.Subscribe("purser.agent.bench.>", func(m *nats.Msg) {
		if m.Header.Get(bus.HeaderType) == ends {
			answers <- struct{}{}
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Unsubscribe()
	lat := make([]time.Duration, 0, b.N)
	stmts0, commits0 := s.Store.WriteStats()
	b.ResetTimer()
	for i := range b.N {
		// A conversation per turn keeps state small and lanes busy
		// the way many users would.
		conv := fmt.Sprintf("c%d", i)
		t := contracts.UserTurn{TurnID: fmt.Sprintf("t%d", i), TenantID: "bench", UserID: "u", Roles: []string{"member"},
			ConversationID: conv, Text: text, Timezone: "UTC", SentAt: time.Now().UTC()}
		payload, _ := json.Marshal(t)
		subject, _ := bus.TurnSubject("bench", conv)
		start := time.Now()
		if err := s.Pub.Publish(subject, bus.NewMessage("turn-"+t.TurnID, payload, bus.Headers{Type: contracts.TypeUserTurn, Tenant: "bench"})); err != nil {
			b.Fatal(err)
		}
		<-answers
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	stmts, commits := s.Store.WriteStats()
	// Writes the orchestrator's part of a turn makes (the
	// notifier's frame is not in this benchmark).
	b.ReportMetric(float64(stmts-stmts0)/float64(b.N), "writes/turn")
	b.ReportMetric(float64(commits-commits0)/float64(b.N), "commits/turn")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkWaitingTurnMemory is what a turn waiting on the model costs the
// orchestrator: b.N turns of different users, each held by a model that
// has not answered, measured as heap (after a GC) and goroutines while all
// wait, per turn. The model's own client (an HTTP request to a model
// server) is not included.
func BenchmarkWaitingTurnMemory(b *testing.B) {
	model := newHeldModel()
	s := systest.Start(b, systest.Options{DSN: storetest.SQLiteDSN(b), Orchestrators: 1, Model: model,
		Orchestrator: orchestrator.Config{ModelConcurrency: b.N + 1}})
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	b.ResetTimer()
	for i := range b.N {
		s.User("bench", fmt.Sprintf("u%d", i)).Say("hello")
	}
	deadline := time.Now().Add(5 * time.Minute)
	for int(model.inFlight.Load()) < b.N {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d calls in flight", model.inFlight.Load(), b.N)
		}
		time.Sleep(10 * time.Millisecond)
	}
	b.StopTimer()
	var during runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&during)
	b.ReportMetric(float64(int64(during.HeapInuse)-int64(before.HeapInuse))/float64(b.N)/1024, "heap-KB/turn")
	b.ReportMetric(float64(int64(during.StackInuse)-int64(before.StackInuse))/float64(b.N)/1024, "stack-KB/turn")
	b.ReportMetric(float64(runtime.NumGoroutine()-g0)/float64(b.N), "goroutines/turn")
	model.open()
}

// BenchmarkStateCodec is the JSON work on a conversation's state that each
// event applied pays twice, decoding it when loaded and encoding it when
// saved: a state as a busy conversation carries it (a full history, working
// memory, a pending proposal, the applied ids), about 5 KB as stored.
func BenchmarkStateCodec(b *testing.B) {
	at := time.Date(2026, 11, 26, 12, 21, 3, 780446508, time.UTC)
	s := orchestrator.State{UserID: "u1", Roles: []string{"member"}, Timezone: "Europe/London", Updated: at,
		Memory: orchestrator.Memory{
			"entities.balance": json.RawMessage(`{"range":"this_month","from":"2026-11-01","to":"2026-11-30","total":[{"minor":1400,"currency":"GBP"}],"count":4}`),
			"entities.expense": json.RawMessage(`{"id":13,"item":"coffee","amount":{"minor":350,"currency":"GBP"},"date":"2026-11-26"}`),
			"ids.expense_id":   json.RawMessage(`13`),
			"params.range":     json.RawMessage(`"this_month"`),
		},
		Proposals: []orchestrator.PendingProposal{{ID: "p-t4ed6c8125d296c27ee15a60f95bf3a88-1", TurnID: "t4ed6c8125d296c27ee15a60f95bf3a88",
			Text: "add coffee 3.50", Tool: contracts.ToolAddExpense, Args: json.RawMessage(`{"amount":"3.50","currency":"GBP","date":"2026-11-26","item":"coffee"}`),
			Summary: "Add expense 'coffee' £3.50 on 2026-11-26?", Revision: 1, ExpiresAt: at.Add(15 * time.Minute)}},
	}
	for i := range 24 {
		turn := fmt.Sprintf("t%031x", i)
		s.Applied = append(s.Applied, turn)
		e := orchestrator.Entry{Role: "user", Text: "how much did I spend this month?", TurnID: turn, At: at}
		if i%2 == 1 {
			e = orchestrator.Entry{Role: "assistant", Text: "You spent £14.00 this month (2026-11-01 to 2026-11-30), over 4 expenses.", TurnID: turn, At: at}
		}
		s.History = append(s.History, e)
	}
	data, err := json.Marshal(s)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var got orchestrator.State
		if err := json.Unmarshal(data, &got); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(got); err != nil {
			b.Fatal(err)
		}
	}
}
