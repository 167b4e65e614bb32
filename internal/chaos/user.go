package chaos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/purser-ai/purser/internal/wsclient"
	"github.com/purser-ai/purser/pkg/contracts"
)

// expense is what a user was told about one of their expenses.
type expense struct {
	item  string
	minor int64
	// category is the category the user was told of ("" when unknown);
	// catEither, when set, is another the expense may hold after a
	// recategorisation whose outcome was not reported.
	category, catEither string
	// uncertain: a turn about it ended in an error, so either the state
	// before or after that turn is acceptable.
	uncertain bool
	before    int64 // the amount before the uncertain change; -1 if it may be gone
}

// change is a change the user was told of: its op (add, change, delete),
// the expense, and the expense as it was before (nil for an add).
type change struct {
	op    string
	id    int64
	prior *expense
}

// user drives one person's turns through a websocket, as the protocol asks
// of a client: a frame not acked is sent again with the same id, and after
// a reconnect the socket resumes from the last seq seen.
type user struct {
	id     string
	client *wsclient.Client
	rng    *rand.Rand

	mu       sync.Mutex
	answers  map[string][]int64 // turn id -> seqs of its terminal frames
	expenses map[int64]*expense
	// last is the user's latest change whose outcome they were told, the
	// one "undo that" reverts; nil after an undo or an uncertain turn.
	last *change
	// rules and categories the user was told they made (rules: pattern,
	// lower-cased, to category); the maybe sets hold those whose turn
	// ended unreported, which may or may not exist.
	rules      map[string]string
	rulesMaybe map[string]bool
	cats       map[string]bool
	catsMaybe  map[string]bool
	// lines are the user's imported transactions (seeded before the run)
	// by number, with the category they were told each holds.
	lines   map[int64]*expense
	turns   int
	stuck   []string
	errored []string
	slowest time.Duration
	done    []time.Time // when each turn finished
}

func newUser(id, token, ingress string, seed uint64) *user {
	return &user{id: id, client: wsclient.New(wsclient.Config{URL: "ws://" + ingress + "/v1/ws", Token: token, Buffer: 256}),
		rng: rand.New(rand.NewPCG(seed, 7)), answers: map[string][]int64{}, expenses: map[int64]*expense{},
		rules: map[string]string{}, rulesMaybe: map[string]bool{}, cats: map[string]bool{}, catsMaybe: map[string]bool{}, lines: map[int64]*expense{}}
}

// newUserOn is newUser for several ingress replicas: the user's socket
// goes to ingresses[first] and, when that one does not answer, to the
// next that does, where it stays until its socket drops again.
func newUserOn(id, token string, ingresses []string, first int, seed uint64) *user {
	u := newUser(id, token, ingresses[first], seed)
	f := &failover{addrs: ingresses, cur: first}
	u.client = wsclient.New(wsclient.Config{URL: "ws://" + ingresses[first] + "/v1/ws", Token: token, Buffer: 256, Dial: f.dial})
	return u
}

// failover dials the ingress that answered last, then the others in turn.
type failover struct {
	mu    sync.Mutex
	addrs []string
	cur   int
}

func (f *failover) dial(ctx context.Context, _ string, opts *websocket.DialOptions) (*websocket.Conn, *http.Response, error) {
	f.mu.Lock()
	first := f.cur
	f.mu.Unlock()
	var err error
	for i := range f.addrs {
		k := (first + i) % len(f.addrs)
		var conn *websocket.Conn
		var resp *http.Response
		if conn, resp, err = websocket.Dial(ctx, "ws://"+f.addrs[k]+"/v1/ws", opts); err == nil {
			f.mu.Lock()
			f.cur = k
			f.mu.Unlock()
			return conn, resp, nil
		}
		if resp != nil && resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return nil, resp, err // refused: another replica refuses too
		}
	}
	return nil, nil, err
}

// connect (re)opens the socket and resumes after the last seq seen.
func (u *user) connect(ctx context.Context) error {
	for attempt := 0; ; attempt++ {
		dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := u.client.Connect(dctx)
		cancel()
		if err == nil {
			wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			return u.client.Resume(wctx)
		}
		if ctx.Err() != nil || attempt > 300 {
			return fmt.Errorf("%s: connect: %w", u.id, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var errStuck = errors.New("stuck")

// exchange sends frame until it is acked, then waits for the frame that
// ends its turn. Frames of other turns are ignored; a terminal frame seen
// again under the same seq (a replay) is not counted twice.
func (u *user) exchange(ctx context.Context, frame wsclient.Turn, limit time.Duration) (contracts.ServerFrame, error) {
	id := frame.ID()
	defer u.client.Forget(id) // acked, or given up as stuck
	deadline := time.Now().Add(limit)
	turnID := ""
	resend := time.Now()
	// trail is what this exchange saw, printed when it gets stuck.
	var trail []string
	note := func(format string, args ...any) {
		trail = append(trail, time.Now().Format("15:04:05.000")+" "+fmt.Sprintf(format, args...))
		if len(trail) > 40 {
			trail = trail[len(trail)-40:]
		}
	}
	for time.Now().Before(deadline) {
		if turnID == "" && !time.Now().Before(resend) {
			if err := u.send(ctx, frame); err != nil {
				note("write failed: %v; reconnecting", err)
				if err := u.connect(ctx); err != nil {
					return contracts.ServerFrame{}, err
				}
				continue
			}
			note("sent %s", id)
			resend = time.Now().Add(5 * time.Second)
		}
		select {
		case <-ctx.Done():
			return contracts.ServerFrame{}, ctx.Err()
		case f, ok := <-u.client.Frames():
			if !ok { // the socket dropped: reconnect, resume, resend if unacked
				note("socket closed; reconnecting")
				if err := u.connect(ctx); err != nil {
					return contracts.ServerFrame{}, err
				}
				resend = time.Now()
				continue
			}
			switch {
			case f.Type == contracts.FrameAck && f.Ack != nil && f.Ack.ID == id:
				note("ack turn %s", f.TurnID)
				turnID = f.TurnID
			case f.Type == contracts.FrameError && f.Error != nil && f.Error.ID == id:
				// Not queued (the bus was down, or a limit): send it again.
				note("error %s", f.Error.Code)
				turnID, resend = "", time.Now().Add(500*time.Millisecond)
			case turnID != "" && f.TurnID == turnID && isTerminal(f.Type):
				u.mu.Lock()
				seqs := u.answers[turnID]
				seen := false
				for _, s := range seqs {
					seen = seen || s == f.Seq
				}
				if !seen {
					u.answers[turnID] = append(seqs, f.Seq)
				}
				u.mu.Unlock()
				if !seen {
					return f, nil
				}
				note("%s seq %d again", f.Type, f.Seq)
			case isTerminal(f.Type) || f.Type == contracts.FrameAck:
				note("%s seq %d of turn %s", f.Type, f.Seq, f.TurnID)
			}
		case <-time.After(500 * time.Millisecond):
		}
	}
	return contracts.ServerFrame{}, fmt.Errorf("%w; the client saw:\n      %s", errStuck, strings.Join(trail, "\n      "))
}

// send writes o, or writes it again under its id.
func (u *user) send(ctx context.Context, o wsclient.Turn) error {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return u.client.SendTurn(wctx, o)
}

func isTerminal(typ string) bool {
	switch typ {
	case contracts.FrameAnswer, contracts.FrameClarify, contracts.FrameProposal, contracts.FrameError:
		return true
	}
	return false
}

// letters spells n in lower-case letters, so that an item name never
// holds a number the model could read as an amount.
func letters(n int) string {
	var b strings.Builder
	for {
		b.WriteByte(byte('a' + n%26))
		n /= 26
		if n == 0 {
			return b.String()
		}
	}
}

// turn runs one change through a proposal and a yes: an add, or a change
// or delete of one of the user's expenses. It reports whether the turn
// finished.
func (u *user) turn(ctx context.Context, k int, limit time.Duration) {
	start := time.Now()
	conv := "chaos-" + u.id
	var text string
	var target int64
	var newMinor int64
	var fileAs string
	// What the turn may pick from, in a fixed order, so that the seed
	// alone decides which.
	u.mu.Lock()
	var live, lines []int64
	for id, e := range u.expenses {
		if !e.uncertain {
			live = append(live, id)
		}
	}
	for id := range u.lines {
		lines = append(lines, id)
	}
	rules := slices.Collect(maps.Keys(u.rules))
	last := u.last
	u.mu.Unlock()
	slices.Sort(live)
	slices.Sort(lines)
	slices.Sort(rules)
	op := "add"
	if len(live) > 0 {
		switch r := u.rng.IntN(20); {
		case r < 6:
			op = "change"
		case r < 10:
			op = "delete"
		case r == 15 && len(lines) > 0:
			op = "fix"
		case r == 16:
			op = "file"
		case r == 17:
			op = "category"
		case r == 18 && len(rules) > 0:
			op = "unrule"
		case r == 19 && last != nil:
			op = "undo"
		}
	}
	var name string // the category added or the rule's pattern deleted
	newMinor = int64(100 + u.rng.IntN(9900))
	item := "chaos " + letters(k) + " " + u.id
	switch op {
	case "add":
		text = fmt.Sprintf("add £%d.%02d %s today", newMinor/100, newMinor%100, item)
	case "change":
		target = live[u.rng.IntN(len(live))]
		text = fmt.Sprintf("change expense %d to £%d.%02d", target, newMinor/100, newMinor%100)
	case "delete":
		target = live[u.rng.IntN(len(live))]
		text = fmt.Sprintf("delete expense %d", target)
	case "undo":
		target = last.id
		text = "undo that"
	case "file":
		target = live[u.rng.IntN(len(live))]
		u.mu.Lock()
		fileItem := u.expenses[target].item
		u.mu.Unlock()
		fileAs = fileCategories[u.rng.IntN(len(fileCategories))]
		text = fmt.Sprintf("file %s under %s", fileItem, fileAs)
	case "category":
		name = "kind " + letters(k)
		text = "add a category called " + name
	case "unrule":
		name = rules[u.rng.IntN(len(rules))]
		text = "delete the " + name + " rule"
	case "fix":
		target = lines[u.rng.IntN(len(lines))]
		fileAs = fileCategories[u.rng.IntN(len(fileCategories))]
		text = fmt.Sprintf("mark transaction %d as %s", target, fileAs)
	}
	mid := fmt.Sprintf("%s-%d-m", u.id, k)
	p, err := u.exchange(ctx, wsclient.Turn{Message: &contracts.MessageFrame{ID: mid, ConversationID: conv, Text: text}}, limit)
	if err != nil {
		u.record(start, fmt.Sprintf("%s turn %d (%s): %v", u.id, k, text, err), true)
		return
	}
	if p.Type != contracts.FrameProposal || p.Proposal == nil {
		u.record(start, fmt.Sprintf("%s turn %d (%s): no proposal but %s", u.id, k, text, describe(p)), false)
		return
	}
	if (op == "undo" || op == "fix") && !strings.Contains(p.Proposal.Summary, fmt.Sprintf("#%d", target)) {
		// Not the change the user was told of last: approving it would
		// revert something else.
		u.record(start, fmt.Sprintf("%s turn %d (%s): the proposal %q does not name expense #%d", u.id, k, text, p.Proposal.Summary, target), false)
		return
	}
	cid := fmt.Sprintf("%s-%d-c", u.id, k)
	a, err := u.exchange(ctx, wsclient.Turn{Confirm: &contracts.ConfirmFrame{ID: cid, ConversationID: conv, ProposalID: p.Proposal.ProposalID, Decision: "approve"}}, limit)
	switch op {
	case "file":
		u.filed(ctx, k, conv, text, target, fileAs, a, err, start, limit)
		return
	case "category", "unrule":
		u.named(k, op, name, text, a, err, start)
		return
	case "fix":
		u.fixed(k, target, fileAs, text, a, err, start)
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	prior := func(id int64) *expense {
		if e := u.expenses[id]; e != nil {
			c := *e
			return &c
		}
		return nil
	}
	u.last = nil
	switch {
	case err != nil:
		u.stuck = append(u.stuck, fmt.Sprintf("%s turn %d (%s) approve: %v", u.id, k, text, err))
		u.markUncertain(op, target, item, newMinor, last)
	case a.Answer != nil && a.Answer.Added != nil && op == "add":
		u.expenses[a.Answer.Added.ID] = &expense{item: a.Answer.Added.Item, minor: a.Answer.Added.Amount.Minor, category: a.Answer.Added.Category}
		u.last = &change{op: op, id: a.Answer.Added.ID}
	case a.Answer != nil && a.Answer.Updated != nil && op == "change":
		u.last = &change{op: op, id: a.Answer.Updated.ID, prior: prior(a.Answer.Updated.ID)}
		u.expenses[a.Answer.Updated.ID] = &expense{item: a.Answer.Updated.Item, minor: a.Answer.Updated.Amount.Minor, category: a.Answer.Updated.Category}
	case a.Answer != nil && a.Answer.Deleted != nil && op == "delete":
		u.last = &change{op: op, id: a.Answer.Deleted.ID, prior: prior(a.Answer.Deleted.ID)}
		delete(u.expenses, a.Answer.Deleted.ID)
	case a.Answer != nil && op == "undo" && strings.HasPrefix(a.Answer.Content, "Undone"):
		u.undone(last)
	default:
		u.errored = append(u.errored, fmt.Sprintf("%s turn %d (%s) approve: %s", u.id, k, text, describe(a)))
		u.markUncertain(op, target, item, newMinor, last)
	}
	u.turns++
	if d := time.Since(start); d > u.slowest {
		u.slowest = d
	}
	u.done = append(u.done, time.Now())
}

// fixed ends a "mark transaction N as <category>" turn: on its answer the
// line holds the category; without one, either the old or the new.
func (u *user) fixed(k int, id int64, category, text string, a contracts.ServerFrame, err error, start time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.last = nil // the chaos user undoes only its expense changes
	l := u.lines[id]
	switch {
	case err != nil:
		u.stuck = append(u.stuck, fmt.Sprintf("%s turn %d (%s) approve: %v", u.id, k, text, err))
		l.catEither, l.category = l.category, category
	case a.Answer == nil || !strings.HasPrefix(a.Answer.Content, "Updated transaction"):
		u.errored = append(u.errored, fmt.Sprintf("%s turn %d (%s) approve: %s", u.id, k, text, describe(a)))
		l.catEither, l.category = l.category, category
	default:
		l.category, l.catEither = category, ""
	}
	u.turns++
	if d := time.Since(start); d > u.slowest {
		u.slowest = d
	}
	u.done = append(u.done, time.Now())
}

// named ends a turn that adds a category or deletes a rule: on its
// answer the user knows the category exists or the rule is gone; without
// one, either is acceptable.
func (u *user) named(k int, op, name, text string, a contracts.ServerFrame, err error, start time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.last = nil // not a change undo reverts
	done := err == nil && a.Answer != nil && a.Answer.Content != ""
	switch {
	case err != nil:
		u.stuck = append(u.stuck, fmt.Sprintf("%s turn %d (%s) approve: %v", u.id, k, text, err))
	case !done:
		u.errored = append(u.errored, fmt.Sprintf("%s turn %d (%s) approve: %s", u.id, k, text, describe(a)))
	}
	switch {
	case op == "category" && done:
		u.cats[name] = true
	case op == "category":
		u.catsMaybe[name] = true
	case done:
		delete(u.rules, name)
	default:
		delete(u.rules, name)
		u.rulesMaybe[name] = true
	}
	u.turns++
	if d := time.Since(start); d > u.slowest {
		u.slowest = d
	}
	u.done = append(u.done, time.Now())
}

// ruleSaved reports whether a is the answer to an approved rule: a new
// one saved, or one for the same pattern changed.
func ruleSaved(a contracts.ServerFrame) bool {
	return a.Answer != nil && (strings.HasPrefix(a.Answer.Content, "Saved the rule") || strings.HasPrefix(a.Answer.Content, "Changed the rule"))
}

// fileCategories are what the "file" turns move expenses to.
var fileCategories = []string{"software", "travel", "dining"}

// filed ends a "file <item> under <category>" turn: the yes to the
// recategorisation is answered with the rule for next time, proposed in
// turn, which is approved too (its pattern is the expense's own name, so
// it files no other expense of the user's).
func (u *user) filed(ctx context.Context, k int, conv, text string, target int64, category string, p contracts.ServerFrame, err error, start time.Time, limit time.Duration) {
	u.mu.Lock()
	e := u.expenses[target]
	u.last = nil // not a change undo reverts
	switch {
	case err == nil && p.Proposal != nil && p.Proposal.Tool == contracts.ToolSetRule:
		e.category, e.catEither = category, ""
	case err == nil && p.Answer != nil && u.rules[strings.ToLower(e.item)] == category:
		// Filed again where its rule already files it: nothing to offer.
		e.category, e.catEither = category, ""
	case err != nil:
		u.stuck = append(u.stuck, fmt.Sprintf("%s turn %d (%s) approve: %v", u.id, k, text, err))
		e.catEither, e.category = e.category, category
	default:
		u.errored = append(u.errored, fmt.Sprintf("%s turn %d (%s) approve: %s, want the rule offered", u.id, k, text, describe(p)))
		e.catEither, e.category = e.category, category
	}
	u.mu.Unlock()
	if err == nil && p.Proposal != nil && p.Proposal.Tool == contracts.ToolSetRule {
		rid := fmt.Sprintf("%s-%d-r", u.id, k)
		a, err := u.exchange(ctx, wsclient.Turn{Confirm: &contracts.ConfirmFrame{ID: rid, ConversationID: conv, ProposalID: p.Proposal.ProposalID, Decision: "approve"}}, limit)
		u.mu.Lock()
		switch {
		case err != nil:
			u.stuck = append(u.stuck, fmt.Sprintf("%s turn %d (%s) rule: %v", u.id, k, text, err))
		case !ruleSaved(a):
			u.errored = append(u.errored, fmt.Sprintf("%s turn %d (%s) rule: %s", u.id, k, text, describe(a)))
		}
		pattern := strings.ToLower(e.item)
		if err == nil && ruleSaved(a) {
			u.rules[pattern] = category
		} else {
			u.rulesMaybe[pattern] = true
		}
		u.mu.Unlock()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.turns++
	if d := time.Since(start); d > u.slowest {
		u.slowest = d
	}
	u.done = append(u.done, time.Now())
}

// undone records that c was reverted: an added expense is gone, a changed
// one has its amount back, a deleted one is back under its number. Called
// with u.mu held.
func (u *user) undone(c *change) {
	switch c.op {
	case "add":
		delete(u.expenses, c.id)
	case "change", "delete":
		if c.prior != nil {
			restored := *c.prior
			u.expenses[c.id] = &restored
		}
	}
}

// markUncertain notes that an approved change's outcome was not reported:
// either state is acceptable for that expense (for an undo, last is the
// change it may have reverted). Called with u.mu held.
func (u *user) markUncertain(op string, target int64, item string, minor int64, last *change) {
	switch op {
	case "undo":
		switch last.op {
		case "add": // it may be gone
			if e := u.expenses[last.id]; e != nil {
				e.uncertain, e.before = true, -1
			}
		case "change": // either amount
			if e := u.expenses[last.id]; e != nil && last.prior != nil {
				e.uncertain, e.before = true, last.prior.minor
			}
		case "delete": // it may be back, under its own number
			if last.prior != nil {
				u.expenses[last.id] = &expense{item: last.prior.item, minor: last.prior.minor, category: last.prior.category, uncertain: true, before: -1}
			}
		}
	case "add":
		u.expenses[-int64(len(u.expenses)+1)] = &expense{item: item, minor: minor, uncertain: true, before: -1}
	case "change", "delete":
		if e := u.expenses[target]; e != nil {
			e.uncertain, e.before = true, e.minor
			if op == "change" {
				e.minor = minor
			} else {
				e.before = -1
			}
		}
	}
}

func (u *user) record(start time.Time, what string, stuck bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if stuck {
		u.stuck = append(u.stuck, what)
	} else {
		u.errored = append(u.errored, what)
	}
	u.turns++
	u.done = append(u.done, time.Now())
	if d := time.Since(start); d > u.slowest {
		u.slowest = d
	}
}

func describe(f contracts.ServerFrame) string {
	switch {
	case f.Error != nil:
		return "error " + f.Error.Code + ": " + f.Error.Message
	case f.Answer != nil:
		return "answer " + f.Answer.Content
	case f.Clarify != nil:
		return "question " + f.Clarify.Question
	}
	return f.Type
}
