package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Cost is what a turn costs, side by side with the bare pipeline's, in
// one run: the figures issue 38's targets are read from.
type Cost struct {
	Purser, Baseline Result
	// WAL is what the Postgres server's write-ahead log grew by while
	// purser's users ran, and WALIdle while the baseline's did (purser
	// idle: what the server's other clients wrote, and purser's
	// background work); -1 when not on Postgres.
	WAL, WALIdle int64
	// WALOwn is what of WAL was the database's own (WAL.Own); -1 when not
	// known.
	WALOwn int64
}

// CPUPerTurn is r's CPU a served turn (0 when it served none).
func CPUPerTurn(r Result) time.Duration {
	if r.Turns == 0 {
		return 0
	}
	return r.CPU / time.Duration(r.Turns)
}

// CPURatio is purser's CPU a turn over the baseline's (0 when either is
// not known).
func (c Cost) CPURatio() float64 {
	p, b := CPUPerTurn(c.Purser), CPUPerTurn(c.Baseline)
	if p == 0 || b == 0 {
		return 0
	}
	return float64(p) / float64(b)
}

// perTurnKB is bytes a turn of r in KB (1,024 bytes).
func perTurnKB(bytes int64, turns int) float64 {
	if turns == 0 {
		return 0
	}
	return float64(bytes) / float64(turns) / 1024
}

// Write writes the cost lines: CPU a turn and its ratio, and bytes written
// a turn, with the targets beside them.
func (c Cost) Write(w io.Writer) {
	if c.Purser.Turns == 0 {
		return
	}
	if c.Purser.CPU > 0 {
		line := fmt.Sprintf("CPU a turn: purser %.2f ms", float64(CPUPerTurn(c.Purser))/1e6)
		if r := c.CPURatio(); r > 0 {
			line += fmt.Sprintf(", baseline %.2f ms: purser/baseline %.2fx (target at most 3x)", float64(CPUPerTurn(c.Baseline))/1e6, r)
		}
		fmt.Fprintf(w, "%-9s %s\n", "cost", line)
	}
	var parts []string
	if c.Purser.Written >= 0 {
		parts = append(parts, fmt.Sprintf("%.1f KB by this process", perTurnKB(c.Purser.Written, c.Purser.Turns)))
	}
	if c.WAL >= 0 {
		wal := c.WAL
		if c.WALOwn >= 0 {
			parts = append(parts, fmt.Sprintf("%.1f KB of Postgres WAL in this database (%.1f KB in the server's whole log)",
				perTurnKB(c.WALOwn, c.Purser.Turns), perTurnKB(c.WAL, c.Purser.Turns)))
			wal = c.WALOwn
		} else {
			parts = append(parts, fmt.Sprintf("%.1f KB of Postgres WAL", perTurnKB(c.WAL, c.Purser.Turns)))
		}
		if c.Purser.Written >= 0 {
			parts = append(parts, fmt.Sprintf("%.1f KB in all", perTurnKB(wal+c.Purser.Written, c.Purser.Turns)))
		}
	}
	if len(parts) > 0 {
		line := "written to storage a turn: " + strings.Join(parts, ", ") + " (target at most 30 KB)"
		if c.WAL >= 0 && c.WALIdle >= 0 && c.Baseline.Elapsed > 0 && c.Purser.Elapsed > 0 {
			// The server's log is shared: what it grew by while purser
			// was idle, scaled to purser's run, says how much of the
			// figure is not purser's.
			idle := float64(c.WALIdle) * c.Purser.Elapsed.Seconds() / c.Baseline.Elapsed.Seconds()
			line += fmt.Sprintf("; the WAL grew %.1f KB a turn's worth over as long with purser idle (the baseline's run)", idle/float64(c.Purser.Turns)/1024)
		}
		fmt.Fprintf(w, "%-9s %s\n", "", line)
	}
}

// FirstTokenReport is time to first token against the model's own.
type FirstTokenReport struct {
	Split FirstTokenSplit
	// StubFirst is the stub's own time to first token of each call it
	// served meanwhile (request received to the first chunk with content
	// or a tool call written), sorted.
	StubFirst []time.Duration
}

// NewFirstTokenReport matches a run's turns with the calls the stub
// served during it.
func NewFirstTokenReport(r Result, calls []Call) FirstTokenReport {
	rep := FirstTokenReport{Split: SplitFirstToken(r.Times, calls)}
	for _, c := range calls {
		if !c.FirstToken.IsZero() {
			rep.StubFirst = append(rep.StubFirst, c.FirstToken.Sub(c.Received))
		}
	}
	slices.Sort(rep.StubFirst)
	return rep
}

// Write writes the first-token line: purser's p50, the model's own for
// the same turns, and what purser added, with the target.
func (f FirstTokenReport) Write(w io.Writer) {
	s := f.Split
	if len(s.Turn) == 0 {
		return
	}
	p50, m50 := Quantile(s.Turn, .5), Quantile(s.Model, .5)
	fmt.Fprintf(w, "%-9s first token p50: purser %s, the model's own %s (its time on the turn's calls, at the stub): %s more (target at most 10ms)\n",
		"latency", ms(p50), ms(m50), ms(p50-m50))
	fmt.Fprintf(w, "%-9s purser's part of each turn's first token: p50 %s p90 %s p99 %s max %s over %d turns",
		"", ms(Quantile(s.Added, .5)), ms(Quantile(s.Added, .9)), ms(Quantile(s.Added, .99)), ms(Quantile(s.Added, 1)), len(s.Added))
	if len(f.StubFirst) > 0 {
		fmt.Fprintf(w, "; a stub call's own first token p50 %s", ms(Quantile(f.StubFirst, .5)))
	}
	fmt.Fprintln(w)
	kinds := make([]string, 0, len(s.Kinds))
	for k := range s.Kinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		p := s.Kinds[k]
		line := fmt.Sprintf("%s (%d turns), p50: before the model %s, the model %s", kindOfCalls(k), len(p.Before), ms(Quantile(p.Before, .5)), ms(Quantile(p.Model, .5)))
		if strings.Contains(k, ",") {
			line += fmt.Sprintf(", between its calls %s", ms(Quantile(p.Between, .5)))
		}
		line += fmt.Sprintf(", after the model %s", ms(Quantile(p.After, .5)))
		fmt.Fprintf(w, "%-9s %s\n", "", line)
	}
}

// kindOfCalls names a turn by the calls the stub answered in it, the
// bench's way where it knows it.
func kindOfCalls(replies string) string {
	switch replies {
	case "list_expenses,text":
		return "read"
	case "add_expense":
		return "add (to its proposal)"
	case "text":
		return "approval (to the answer's first token)"
	case "ask_clarification":
		return "clarify"
	}
	return replies
}

// GrowthReport is how prompts grow along conversations of the stub model.
type GrowthReport struct {
	All    PromptGrowth
	ByKind map[string]PromptGrowth
	Series []float64 // PromptSeries
}

// NewGrowthReport measures message from against message to of the
// conversations named with prefix.
func NewGrowthReport(calls []Call, prefix string, from, to int) GrowthReport {
	return GrowthReport{All: GrowthOf(calls, prefix, from, to), ByKind: GrowthByKind(calls, prefix, from, to), Series: PromptSeries(calls, prefix)}
}

// kindNames are the bench's names for what the stub's first call of a
// turn replied.
var kindNames = map[string]string{"list_expenses": "read", "add_expense": "add", "ask_clarification": "clarify", "text": "text"}

// Write writes the prompt line: tokens a turn at both messages, their
// ratio against the target, by kind of turn, and a few points between.
func (g GrowthReport) Write(w io.Writer) {
	a := g.All
	if a.Conversations == 0 {
		fmt.Fprintf(w, "%-9s prompt tokens a turn: no conversation reached message %d\n", "prompt", a.To)
		return
	}
	fmt.Fprintf(w, "%-9s prompt tokens a turn (stub's count, characters/4): message %d %.0f, message %d %.0f: %.2fx over %d conversations (target at most 1.2x)\n",
		"prompt", a.From, a.FromTokens, a.To, a.ToTokens, a.Ratio(), a.Conversations)
	var kinds []string
	for k := range g.ByKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var parts []string
	for _, k := range kinds {
		b := g.ByKind[k]
		name := kindNames[k]
		if name == "" {
			name = k
		}
		parts = append(parts, fmt.Sprintf("%s %.0f -> %.0f (%.2fx)", name, b.FromTokens, b.ToTokens, b.Ratio()))
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "%-9s by kind of turn: %s\n", "", strings.Join(parts, ", "))
	}
	var pts []string
	seen := map[int]bool{}
	for _, n := range []int{1, 2, 3, 10, 25, a.To - 2, a.To - 1, a.To} {
		if n > 0 && n < len(g.Series) && g.Series[n] > 0 && !seen[n] {
			seen[n] = true
			pts = append(pts, fmt.Sprintf("%d: %.0f", n, g.Series[n]))
		}
	}
	if len(pts) > 0 {
		fmt.Fprintf(w, "%-9s average by message, every kind: %s\n", "", strings.Join(pts, ", "))
	}
}
