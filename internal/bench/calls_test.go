package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// A tagged message reads back as the person's text, its conversation and
// its number; text without a tag, or with a broken one, is left as it is.
func TestCutTag(t *testing.T) {
	rest, conv, n, ok := cutTag("add a taxi ride" + Tag("b1-u7", 12))
	if !ok || rest != "add a taxi ride" || conv != "b1-u7" || n != 12 {
		t.Fatalf("cutTag = %q %q %d %v", rest, conv, n, ok)
	}
	for _, text := range []string{"add a taxi ride", "see [stub x]", "a [stub c/0]", "a [stub c/x]", "a [stub /3]", "a [stub c/3] and more"} {
		if rest, _, _, ok := cutTag(text); ok || rest != text {
			t.Errorf("cutTag(%q) = %q, %v: want no tag", text, rest, ok)
		}
	}
}

// A request's prompt is counted as a quarter token a character of its
// messages' text, tool calls and tool definitions, rounded up.
func TestPromptTokens(t *testing.T) {
	body := `{"model":"stub","messages":[
		{"role":"system","content":"12345678"},
		{"role":"user","content":"abcd"},
		{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"list","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"c1","content":"xy"}],
		"tools":[{"a":1}]}`
	var req chatRequest
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	// 8 + 4 + len("list")+len("{}") + 2 + len(`[{"a":1}]`) = 8+4+6+2+9 = 29 characters.
	if got := req.PromptTokens(); got != 8 {
		t.Fatalf("PromptTokens = %d, want 8 (29 characters / 4, rounded up)", got)
	}
}

var t0 = time.Date(2026, 11, 27, 20, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// A turn's first token is split between the model and purser: the time
// from each of its conversation's calls received within the turn to that
// call's ready output is the model's, the rest purser's. A read is a tool
// call whole, then a text call to its first piece; calls of another
// conversation, or before the turn, are not counted.
func TestSplitFirstToken(t *testing.T) {
	calls := []Call{
		// conversation a, the read: 10-410 tool call, 430-630 first text.
		{Conv: "a", Reply: "text", Received: at(430), FirstToken: at(630), Ready: at(630), Done: at(830)},
		{Conv: "a", Reply: "list_expenses", Received: at(10), FirstToken: at(210), Ready: at(410), Done: at(410)},
		// conversation a, a call of an earlier turn.
		{Conv: "a", Reply: "ask_clarification", Received: at(-500), Ready: at(-100), Done: at(-100)},
		// conversation b, one clarify call, overlapping in time.
		{Conv: "b", Reply: "ask_clarification", Received: at(20), FirstToken: at(220), Ready: at(420), Done: at(420)},
		// untagged: not matched.
		{Received: at(0), Ready: at(1000), Done: at(1000)},
	}
	turns := []TurnTime{
		{Conv: "a", Sent: at(0), First: at(640)},   // model 400+200, purser 40
		{Conv: "b", Sent: at(5), First: at(425)},   // model 400, purser 20
		{Conv: "c", Sent: at(0), First: at(100)},   // the stub never saw it
		{Conv: "a", Sent: at(-520), First: at(-5)}, // model 400 (ready at -100), purser 115
	}
	s := SplitFirstToken(turns, calls)
	want := FirstTokenSplit{
		Turn:  []time.Duration{420 * time.Millisecond, 515 * time.Millisecond, 640 * time.Millisecond},
		Model: []time.Duration{400 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond},
		Added: []time.Duration{20 * time.Millisecond, 40 * time.Millisecond, 115 * time.Millisecond},
	}
	for name, pair := range map[string][2][]time.Duration{"turn": {s.Turn, want.Turn}, "model": {s.Model, want.Model}, "added": {s.Added, want.Added}} {
		if len(pair[0]) != len(pair[1]) {
			t.Fatalf("%s: %v, want %v", name, pair[0], pair[1])
		}
		for i := range pair[0] {
			if pair[0][i] != pair[1][i] {
				t.Fatalf("%s: %v, want %v", name, pair[0], pair[1])
			}
		}
	}
	// Where purser's part fell, by kind of turn: the read's 40 ms are 10
	// before its first call, 20 between its calls and 10 after the text's
	// first piece; the two clarifications' 15 and 20 before their call, 5
	// and 95 after it.
	read, clarify := s.Kinds["list_expenses,text"], s.Kinds["ask_clarification"]
	if len(s.Kinds) != 2 || read == nil || clarify == nil {
		t.Fatalf("kinds %v", s.Kinds)
	}
	ms := func(d ...int) []time.Duration {
		var out []time.Duration
		for _, n := range d {
			out = append(out, time.Duration(n)*time.Millisecond)
		}
		return out
	}
	for name, pair := range map[string][2][]time.Duration{
		"read before": {read.Before, ms(10)}, "read between": {read.Between, ms(20)}, "read after": {read.After, ms(10)}, "read model": {read.Model, ms(600)},
		"clarify before": {clarify.Before, ms(15, 20)}, "clarify after": {clarify.After, ms(5, 95)}, "clarify between": {clarify.Between, ms(0, 0)},
	} {
		if fmt.Sprint(pair[0]) != fmt.Sprint(pair[1]) {
			t.Errorf("%s: %v, want %v", name, pair[0], pair[1])
		}
	}
	// A call still not ready when the first frame arrived counts to the
	// frame only.
	s = SplitFirstToken([]TurnTime{{Conv: "b", Sent: at(0), First: at(300)}}, calls)
	if s.Model[0] != 280*time.Millisecond || s.Added[0] != 20*time.Millisecond {
		t.Fatalf("model %v, added %v: want 280ms and 20ms", s.Model, s.Added)
	}
}

// Prompt tokens a turn are every call of the turn's summed, averaged over
// the conversations that reached both messages compared; by kind, the
// conversations are grouped by what the first call of the earlier turn
// was answered.
func TestPromptGrowth(t *testing.T) {
	calls := []Call{
		// x: a read at 2 (two calls) and at 5.
		{Conv: "g-x", Turn: 2, Reply: "list_expenses", Received: at(0), PromptTokens: 100},
		{Conv: "g-x", Turn: 2, Reply: "text", Received: at(1), PromptTokens: 120},
		{Conv: "g-x", Turn: 5, Reply: "list_expenses", Received: at(9), PromptTokens: 110},
		{Conv: "g-x", Turn: 5, Reply: "text", Received: at(10), PromptTokens: 150},
		// y: a clarify at 2 and 5.
		{Conv: "g-y", Turn: 2, Reply: "ask_clarification", Received: at(0), PromptTokens: 80},
		{Conv: "g-y", Turn: 5, Reply: "ask_clarification", Received: at(9), PromptTokens: 80},
		// z never reached 5; other is not in the phase.
		{Conv: "g-z", Turn: 2, Reply: "ask_clarification", Received: at(0), PromptTokens: 1000},
		{Conv: "other", Turn: 2, Reply: "text", Received: at(0), PromptTokens: 5},
		{Conv: "other", Turn: 5, Reply: "text", Received: at(0), PromptTokens: 5000},
	}
	g := GrowthOf(calls, "g-", 2, 5)
	if g.Conversations != 2 || g.FromTokens != 150 || g.ToTokens != 170 || math.Abs(g.Ratio()-170.0/150) > 1e-9 {
		t.Fatalf("growth %+v ratio %v: want 2 conversations, 150 -> 170", g, g.Ratio())
	}
	k := GrowthByKind(calls, "g-", 2, 5)
	if len(k) != 2 || k["list_expenses"].FromTokens != 220 || k["list_expenses"].ToTokens != 260 ||
		k["ask_clarification"].Conversations != 1 || k["ask_clarification"].Ratio() != 1 {
		t.Fatalf("by kind %+v", k)
	}
	series := PromptSeries(calls, "g-")
	if len(series) != 6 || series[2] != (220+80+1000)/3.0 || series[5] != (260+80)/2.0 || series[3] != 0 {
		t.Fatalf("series %v", series)
	}
	var out bytes.Buffer
	NewGrowthReport(calls, "g-", 2, 5).Write(&out)
	for _, want := range []string{"message 2 150, message 5 170: 1.13x over 2 conversations (target at most 1.2x)", "read 220 -> 260 (1.18x)", "clarify 80 -> 80 (1.00x)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	NewGrowthReport(calls, "none-", 2, 50).Write(&out)
	if !strings.Contains(out.String(), "no conversation reached message 50") {
		t.Errorf("report with nothing measured:\n%s", out.String())
	}
}

// The cost lines give CPU a turn of both runs and their ratio, and bytes
// written a turn, with Postgres's log and what it grew with purser idle.
func TestCostWrite(t *testing.T) {
	c := Cost{
		Purser:   Result{Turns: 1000, Elapsed: 20 * time.Second, CPU: 2280 * time.Millisecond, Written: 1000 * 115 * 1024},
		Baseline: Result{Turns: 2000, Elapsed: 10 * time.Second, CPU: 980 * time.Millisecond, Written: 0},
		WAL:      1000 * 40 * 1024, WALIdle: 1000 * 1024, WALOwn: -1,
	}
	if r := c.CPURatio(); math.Abs(r-2.28/0.49) > 1e-9 {
		t.Fatalf("ratio %v, want %v", r, 2.28/0.49)
	}
	var out bytes.Buffer
	c.Write(&out)
	for _, want := range []string{
		"CPU a turn: purser 2.28 ms, baseline 0.49 ms: purser/baseline 4.65x (target at most 3x)",
		"written to storage a turn: 115.0 KB by this process, 40.0 KB of Postgres WAL, 155.0 KB in all (target at most 30 KB)",
		// 1,000 KB over 10 s idle is 2,000 KB over purser's 20 s: 2 KB a turn.
		"the WAL grew 2.0 KB a turn's worth over as long with purser idle",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("cost lacks %q:\n%s", want, out.String())
		}
	}
	// With what of the log was the database's, that is the figure.
	out.Reset()
	c.WALOwn = 1000 * 30 * 1024
	c.Write(&out)
	if want := "115.0 KB by this process, 30.0 KB of Postgres WAL in this database (40.0 KB in the server's whole log), 145.0 KB in all"; !strings.Contains(out.String(), want) {
		t.Errorf("cost lacks %q:\n%s", want, out.String())
	}
	// On SQLite, no WAL; without a baseline, no ratio.
	out.Reset()
	Cost{Purser: c.Purser, WAL: -1, WALIdle: -1, WALOwn: -1}.Write(&out)
	if s := out.String(); strings.Contains(s, "WAL") || strings.Contains(s, "baseline") || !strings.Contains(s, "115.0 KB by this process (target") {
		t.Errorf("SQLite cost without a baseline:\n%s", s)
	}
}
