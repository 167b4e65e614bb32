package bench

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A bench user's message carries a tag naming its conversation and its
// number there when the stub model is to key what it sees by them (see
// Options.Tag). The stub reads the tag from the person's latest message and
// decides as if it were not there.
const tagOpen = " [stub "

// Tag is the tag of the n-th message (from 1) of conversation conv.
func Tag(conv string, n int) string { return fmt.Sprintf("%s%s/%d]", tagOpen, conv, n) }

// cutTag returns text without its tag, and the tag's conversation and
// message number; ok is false when text carries none.
func cutTag(text string) (rest, conv string, n int, ok bool) {
	i := strings.LastIndex(text, tagOpen)
	if i < 0 || !strings.HasSuffix(text, "]") {
		return text, "", 0, false
	}
	body := text[i+len(tagOpen) : len(text)-1]
	j := strings.LastIndexByte(body, '/')
	if j <= 0 {
		return text, "", 0, false
	}
	n, err := strconv.Atoi(body[j+1:])
	if err != nil || n <= 0 {
		return text, "", 0, false
	}
	return text[:i], body[:j], n, true
}

// Call is one chat-completions call the stub model served.
type Call struct {
	Conv  string // from the tag of the person's latest message; "" untagged
	Turn  int    // that message's number in its conversation, from 1
	Reply string // "text", or the tool the stub called
	// Received is when the request came in; FirstToken when the first
	// chunk with content or a tool call was written; Ready when what the
	// caller can act on was written: the first piece of text, or for a
	// tool call the end of the reply, since a call is only whole then;
	// Done when the reply ended.
	Received, FirstToken, Ready, Done time.Time
	// PromptTokens is what the request asked the model to read, counted
	// the stub's way (PromptTokens).
	PromptTokens int
}

// CallLog keeps the calls a stub model served. Its zero value is ready.
type CallLog struct {
	mu    sync.Mutex
	calls []Call
}

func (l *CallLog) add(c Call) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

// Calls returns a copy of the calls logged so far.
func (l *CallLog) Calls() []Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.calls)
}

// chatRequest is what the stub reads of a request.
type chatRequest struct {
	Messages []struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools json.RawMessage `json:"tools"`
}

// PromptTokens counts a request's prompt as a model would bill it,
// roughly: the characters of every message's content and of its tool
// calls' names and arguments, and of the tool definitions as sent (JSON),
// one token for every 4 characters, rounded up. Roles and the JSON around
// the messages are not counted. It is a stable yardstick for comparing
// prompts, not any one tokenizer's count.
func (r chatRequest) PromptTokens() int {
	chars := len(r.Tools)
	for _, m := range r.Messages {
		chars += len(m.Content)
		for _, c := range m.ToolCalls {
			chars += len(c.Function.Name) + len(c.Function.Arguments)
		}
	}
	return (chars + 3) / 4
}

// TurnTime is one served turn as a bench user saw it.
type TurnTime struct {
	Conv string
	// Sent is when the user began writing the turn's frame; First when
	// the first frame that shows the person something (a token, a
	// question, a proposal, the answer) was read from the socket.
	Sent, First time.Time
}

// FirstTokenSplit is the time to first token of turns, and what of it the
// model spent: for each turn, the time from each call of its conversation
// that the stub received between the turn's Sent and First to that call's
// Ready (no later than First), summed. What is left is what purser added:
// the bus, the store, the orchestrator's steps and tools, the notifier,
// the socket, and the bench's own client. Each slice is sorted.
type FirstTokenSplit struct {
	Turn, Model, Added []time.Duration
	// Kinds splits what purser added by kind of turn (named by the calls
	// the stub answered in it, "list_expenses,text" for a read), and by
	// where it fell.
	Kinds map[string]*TurnParts
}

// TurnParts is where purser's part of a kind of turn's first token fell,
// each slice sorted: Before, from the turn sent to the stub receiving its
// first call (the ingress, the bus, the orchestrator before it asks the
// model); Between, from a call's usable output to the next call (a tool's
// round trip: the orchestrator, the bus, the toolrunner); After, from the
// last call's usable output to the first frame read by the client (the
// orchestrator's stream or its stored reply, the notifier, the ingress,
// the socket). Model is the stub's own time in the same turns.
type TurnParts struct {
	Before, Model, Between, After []time.Duration
}

// SplitFirstToken matches turns with the stub's calls by conversation and
// time. Only turns of conversations the stub saw tagged are counted; turns
// the stub served no call in are counted in Turn, Model and Added only.
func SplitFirstToken(turns []TurnTime, calls []Call) FirstTokenSplit {
	byConv := map[string][]Call{}
	for _, c := range calls {
		if c.Conv != "" {
			byConv[c.Conv] = append(byConv[c.Conv], c)
		}
	}
	for _, cs := range byConv {
		slices.SortFunc(cs, func(a, b Call) int { return a.Received.Compare(b.Received) })
	}
	s := FirstTokenSplit{Kinds: map[string]*TurnParts{}}
	for _, t := range turns {
		cs, ok := byConv[t.Conv]
		if !ok || t.First.Before(t.Sent) {
			continue
		}
		var model, between time.Duration
		var replies []string
		var prevReady time.Time
		i, _ := slices.BinarySearchFunc(cs, t.Sent, func(c Call, at time.Time) int { return c.Received.Compare(at) })
		first := i
		for ; i < len(cs) && !cs[i].Received.After(t.First); i++ {
			end := cs[i].Ready
			if end.IsZero() || end.After(t.First) {
				end = t.First
			}
			if d := end.Sub(cs[i].Received); d > 0 {
				model += d
			}
			if !prevReady.IsZero() {
				between += cs[i].Received.Sub(prevReady)
			}
			prevReady = end
			replies = append(replies, cs[i].Reply)
		}
		total := t.First.Sub(t.Sent)
		s.Turn = append(s.Turn, total)
		s.Model = append(s.Model, model)
		s.Added = append(s.Added, total-model)
		if len(replies) == 0 {
			continue
		}
		kind := strings.Join(replies, ",")
		p := s.Kinds[kind]
		if p == nil {
			p = &TurnParts{}
			s.Kinds[kind] = p
		}
		p.Before = append(p.Before, cs[first].Received.Sub(t.Sent))
		p.Model = append(p.Model, model)
		p.Between = append(p.Between, between)
		p.After = append(p.After, t.First.Sub(prevReady))
	}
	slices.Sort(s.Turn)
	slices.Sort(s.Model)
	slices.Sort(s.Added)
	for _, p := range s.Kinds {
		for _, d := range [][]time.Duration{p.Before, p.Model, p.Between, p.After} {
			slices.Sort(d)
		}
	}
	return s
}

// PromptGrowth is the prompt tokens a turn of the same conversations at
// two of their turns: the tokens of every model call a turn made, summed,
// averaged over the conversations that reached both.
type PromptGrowth struct {
	From, To             int // message numbers, from 1
	Conversations        int
	FromTokens, ToTokens float64
}

// Ratio is ToTokens over FromTokens (0 when nothing was measured).
func (g PromptGrowth) Ratio() float64 {
	if g.FromTokens == 0 {
		return 0
	}
	return g.ToTokens / g.FromTokens
}

// GrowthOf measures prompt tokens at message from and at message to of
// the tagged conversations whose names begin with prefix.
func GrowthOf(calls []Call, prefix string, from, to int) PromptGrowth {
	return growthOf(calls, prefix, from, to, "")
}

// GrowthByKind is GrowthOf for each kind of turn message from was: what
// the stub's first call of that turn replied ("list_expenses" for a read,
// "add_expense", "ask_clarification", "text").
func GrowthByKind(calls []Call, prefix string, from, to int) map[string]PromptGrowth {
	first := map[string]Call{} // by conversation: its turn from's first call
	for _, c := range calls {
		if c.Conv == "" || !strings.HasPrefix(c.Conv, prefix) || c.Turn != from {
			continue
		}
		if f, ok := first[c.Conv]; !ok || c.Received.Before(f.Received) {
			first[c.Conv] = c
		}
	}
	out := map[string]PromptGrowth{}
	for _, c := range first {
		if _, ok := out[c.Reply]; !ok {
			out[c.Reply] = growthOf(calls, prefix, from, to, c.Reply)
		}
	}
	return out
}

// growthOf is GrowthOf over the conversations whose turn from began with
// a call the stub replied kind to, or all of them for "".
func growthOf(calls []Call, prefix string, from, to int, kind string) PromptGrowth {
	type key struct {
		conv string
		turn int
	}
	tokens, first := map[key]int{}, map[key]Call{}
	for _, c := range calls {
		if c.Conv == "" || !strings.HasPrefix(c.Conv, prefix) || (c.Turn != from && c.Turn != to) {
			continue
		}
		k := key{c.Conv, c.Turn}
		tokens[k] += c.PromptTokens
		if f, ok := first[k]; !ok || c.Received.Before(f.Received) {
			first[k] = c
		}
	}
	g := PromptGrowth{From: from, To: to}
	var sumFrom, sumTo int
	for k, n := range tokens {
		if k.turn != from || (kind != "" && first[k].Reply != kind) {
			continue
		}
		m, ok := tokens[key{k.conv, to}]
		if !ok {
			continue
		}
		g.Conversations++
		sumFrom += n
		sumTo += m
	}
	if g.Conversations > 0 {
		g.FromTokens = float64(sumFrom) / float64(g.Conversations)
		g.ToTokens = float64(sumTo) / float64(g.Conversations)
	}
	return g
}

// PromptSeries is the average prompt tokens a turn by message number, over
// the tagged conversations whose names begin with prefix: index n is
// message n (index 0 unused, 0 where no conversation reached it).
func PromptSeries(calls []Call, prefix string) []float64 {
	type key struct {
		conv string
		turn int
	}
	tokens := map[key]int{}
	last := 0
	for _, c := range calls {
		if c.Conv != "" && strings.HasPrefix(c.Conv, prefix) {
			tokens[key{c.Conv, c.Turn}] += c.PromptTokens
			last = max(last, c.Turn)
		}
	}
	sum, n := make([]int, last+1), make([]int, last+1)
	for k, t := range tokens {
		sum[k.turn] += t
		n[k.turn]++
	}
	out := make([]float64, last+1)
	for i := range out {
		if n[i] > 0 {
			out[i] = float64(sum[i]) / float64(n[i])
		}
	}
	return out
}
