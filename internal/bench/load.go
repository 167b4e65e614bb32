package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/purser-ai/purser/internal/wsclient"
	"github.com/purser-ai/purser/pkg/contracts"
)

// Kind is one kind of turn a bench user sends.
type Kind string

// Turn kinds: a read question (a tool runs, then the answer), an add
// that is proposed and then approved (two turns), a request that gets a
// clarifying question.
const (
	KindRead    Kind = "read"
	KindAdd     Kind = "add"
	KindClarify Kind = "clarify"
)

// Options is one load run.
type Options struct {
	URL      string                // websocket URL
	Token    func(user int) string // bearer token of user i; "" sends none
	Users    int                   // sockets, each one person in a conversation of their own
	Duration time.Duration         // how long users start turns
	Pause    time.Duration         // between a turn's end and the user's next turn
	Ramp     time.Duration         // users connect spread over this
	Mix      []Kind                // turns each user goes through in turn
	Progress func(p Progress)      // called every second or so; may be nil
	Dial     wsclient.DialFunc     // default websocket.Dial
	Timeout  time.Duration         // one turn's limit, default 60 s
	Label    string                // names conversations apart between runs
	// Turns, when positive, ends the run once this many turns ended
	// (served or failed): users start no turn after it, and finish the
	// ones they are in.
	Turns int
	// Messages, when positive, is how many messages each user sends
	// (an add's approval is part of its message's turn) before stopping,
	// Duration still bounding the run.
	Messages int
	// Tag ends each message with a tag naming its conversation and its
	// number there, for the stub model to log its calls by (Tag).
	Tag bool
}

// Progress is a running count.
type Progress struct {
	Elapsed           time.Duration
	Connected, Turns  int
	Errors, InFlight  int
	TurnsPerSecondNow float64
}

// Result is what a run measured. Latencies are of turns that ended
// within the run, sorted.
type Result struct {
	Elapsed   time.Duration
	Turns     int
	Errors    int
	ErrorText []string // a few, for the report
	E2E       []time.Duration
	FirstByte []time.Duration // to the first token, or the frame that ends the turn when nothing streams
	// Times are the served turns' conversations, and when each was sent
	// and its first token read, in the order they ended.
	Times     []TurnTime
	Connected int
	// CPU is the CPU time this process used meanwhile: the bench's own
	// clients, and purser or the baseline too when they run in it.
	CPU time.Duration
	// Written is what this process caused to be written to storage
	// meanwhile, in bytes; -1 where the system cannot say.
	Written int64
	// Allocated is what this process allocated on the heap meanwhile, in
	// bytes, and GCs the garbage collections it ran: what the collector's
	// share of CPU follows. Both count the bench's own clients too.
	Allocated int64
	GCs       int64
}

// TurnsPerSecond is the served rate.
func (r Result) TurnsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Turns) / r.Elapsed.Seconds()
}

// Quantile returns the q quantile of sorted durations.
func Quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	i := int(q * float64(len(d)-1))
	return d[i]
}

type recorder struct {
	mu        sync.Mutex
	e2e, ttfb []time.Duration
	times     []TurnTime
	errs      []string
	turns     atomic.Int64
	errors    atomic.Int64
	inFlight  atomic.Int64
	connected atomic.Int64
}

func (r *recorder) ok(conv string, sent, first, end time.Time) {
	r.mu.Lock()
	r.e2e = append(r.e2e, end.Sub(sent))
	r.ttfb = append(r.ttfb, first.Sub(sent))
	r.times = append(r.times, TurnTime{Conv: conv, Sent: sent, First: first})
	r.mu.Unlock()
	r.turns.Add(1)
}

// enough reports whether turns ended (served or failed) reached limit, 0
// being none.
func (r *recorder) enough(limit int) bool {
	return limit > 0 && r.turns.Load()+r.errors.Load() >= int64(limit)
}

func (r *recorder) fail(err error) {
	r.errors.Add(1)
	r.mu.Lock()
	if len(r.errs) < 5 {
		r.errs = append(r.errs, err.Error())
	}
	r.mu.Unlock()
}

// Run drives opts.Users users until opts.Duration is over and every
// user's last turn ended (or timed out).
func Run(ctx context.Context, opts Options) (Result, error) {
	if opts.Timeout == 0 {
		opts.Timeout = time.Minute
	}
	if len(opts.Mix) == 0 {
		opts.Mix = []Kind{KindRead, KindAdd, KindClarify}
	}
	rec := &recorder{}
	start, cpu := time.Now(), ProcessCPU()
	allocated, gcs := processAllocated()
	written, canWrite := processWritten()
	stopAt := start.Add(opts.Duration)
	var wg sync.WaitGroup
	progressDone := make(chan struct{})
	if opts.Progress != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(time.Second)
			defer t.Stop()
			last, lastAt := int64(0), start
			for {
				select {
				case <-progressDone:
					return
				case <-ctx.Done():
					return
				case now := <-t.C:
					n := rec.turns.Load()
					opts.Progress(Progress{Elapsed: now.Sub(start), Connected: int(rec.connected.Load()), Turns: int(n),
						Errors: int(rec.errors.Load()), InFlight: int(rec.inFlight.Load()),
						TurnsPerSecondNow: float64(n-last) / now.Sub(lastAt).Seconds()})
					last, lastAt = n, now
				}
			}
		}()
	}
	var users sync.WaitGroup
	for i := range opts.Users {
		users.Add(1)
		go func() {
			defer users.Done()
			if opts.Ramp > 0 {
				select {
				case <-time.After(opts.Ramp * time.Duration(i) / time.Duration(opts.Users)):
				case <-ctx.Done():
					return
				}
			}
			if err := user(ctx, opts, i, stopAt, rec); err != nil {
				rec.fail(err)
			}
		}()
	}
	users.Wait()
	close(progressDone)
	wg.Wait()
	// Turns that ended after the deadline count, over the wall time
	// they took.
	elapsed := time.Since(start)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	slices.Sort(rec.e2e)
	slices.Sort(rec.ttfb)
	res := Result{Elapsed: elapsed, Turns: len(rec.e2e), Errors: int(rec.errors.Load()), ErrorText: rec.errs,
		E2E: rec.e2e, FirstByte: rec.ttfb, Times: rec.times, Connected: int(rec.connected.Load()), CPU: ProcessCPU() - cpu, Written: -1}
	if now, ok := processWritten(); ok && canWrite {
		res.Written = now - written
	}
	nowAllocated, nowGCs := processAllocated()
	res.Allocated, res.GCs = nowAllocated-allocated, nowGCs-gcs
	return res, ctx.Err()
}

// user is one person: connect, then turns with pauses until stopAt.
func user(ctx context.Context, opts Options, i int, stopAt time.Time, rec *recorder) error {
	client := wsclient.New(wsclient.Config{URL: opts.URL, Token: opts.Token(i), Dial: opts.Dial})
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err := client.Connect(dctx)
	cancel()
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer client.Close()
	rec.connected.Add(1)
	conv := fmt.Sprintf("%s-u%d", opts.Label, i)
	u := &session{client: client, frames: client.Frames(), conv: conv, timeout: opts.Timeout, rec: rec}
	for n := 0; time.Now().Before(stopAt) && ctx.Err() == nil && !rec.enough(opts.Turns) && (opts.Messages <= 0 || n < opts.Messages); n++ {
		kind := opts.Mix[(i+n)%len(opts.Mix)]
		id := fmt.Sprintf("%s-%d", conv, n)
		text := func(s string) string {
			if opts.Tag {
				return s + Tag(conv, n+1)
			}
			return s
		}
		switch kind {
		case KindRead:
			u.turn(ctx, message(id, conv, text("what did I spend this month?")), contracts.FrameAnswer)
		case KindClarify:
			u.turn(ctx, message(id, conv, text("add a taxi ride")), contracts.FrameClarify) // no amount: the model asks
		case KindAdd:
			f, ok := u.turn(ctx, message(id, conv, text("add coffee £3.50")), contracts.FrameProposal)
			if ok && f.Proposal != nil {
				u.turn(ctx, wsclient.Turn{Confirm: &contracts.ConfirmFrame{ID: id + "-yes", ConversationID: conv,
					ProposalID: f.Proposal.ProposalID, Decision: "approve"}}, contracts.FrameAnswer)
			}
		}
		if opts.Pause > 0 {
			select {
			case <-time.After(opts.Pause):
			case <-ctx.Done():
			}
		}
	}
	return nil
}

func message(id, conv, text string) wsclient.Turn {
	return wsclient.Turn{Message: &contracts.MessageFrame{ID: id, ConversationID: conv, Text: text, Timezone: "UTC"}}
}

type session struct {
	maxSeq  int64 // frames at or below it were seen: a redelivered copy is skipped
	client  *wsclient.Client
	frames  <-chan contracts.ServerFrame
	conv    string
	timeout time.Duration
	rec     *recorder
}

// send writes frame once: the bench measures, it does not retry.
func (s *session) send(ctx context.Context, frame wsclient.Turn) error {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return s.client.SendTurn(wctx, frame)
}

// turn sends frame and waits for the frame that ends it: want, or an
// error. It returns that frame and whether it was want.
func (s *session) turn(ctx context.Context, frame wsclient.Turn, want string) (contracts.ServerFrame, bool) {
	id := frame.ID()
	defer s.client.Forget(id) // nothing is sent again
	s.rec.inFlight.Add(1)
	defer s.rec.inFlight.Add(-1)
	start := time.Now()
	if err := s.send(ctx, frame); err != nil {
		s.rec.fail(fmt.Errorf("send: %w", err))
		return contracts.ServerFrame{}, false
	}
	timeout := time.NewTimer(s.timeout)
	defer timeout.Stop()
	var first time.Time
	for {
		select {
		case f, open := <-s.frames:
			if !open {
				s.rec.fail(errors.New("connection closed"))
				return contracts.ServerFrame{}, false
			}
			if f.Type == contracts.FrameError && f.Error != nil && f.Error.ID != "" && f.Error.ID == id {
				// Refused before it became a turn (a rate limit, a frame
				// that could not be queued): such errors name the frame,
				// not the conversation.
				s.rec.fail(fmt.Errorf("%s: %s", f.Error.Code, f.Error.Message))
				return f, false
			}
			if f.ConversationID != s.conv {
				continue
			}
			if f.Seq != 0 {
				if f.Seq <= s.maxSeq {
					continue
				}
				s.maxSeq = f.Seq
			}
			switch f.Type {
			case contracts.FrameToken, contracts.FrameClarify, contracts.FrameProposal, contracts.FrameAnswer, contracts.FrameError:
				if first.IsZero() {
					first = time.Now()
				}
			}
			switch f.Type {
			case want:
				s.rec.ok(s.conv, start, first, time.Now())
				return f, true
			case contracts.FrameError:
				msg := "error frame"
				if f.Error != nil {
					msg = f.Error.Code + ": " + f.Error.Message
				}
				s.rec.fail(errors.New(msg))
				return f, false
			case contracts.FrameAnswer, contracts.FrameClarify, contracts.FrameProposal:
				s.rec.fail(fmt.Errorf("got %s, want %s", f.Type, want))
				return f, false
			}
		case <-timeout.C:
			s.rec.fail(fmt.Errorf("no %s within %s", want, s.timeout))
			return contracts.ServerFrame{}, false
		case <-ctx.Done():
			return contracts.ServerFrame{}, false
		}
	}
}

// Report writes a result as the lines "purser bench" prints.
func Report(w io.Writer, name string, r Result) {
	fmt.Fprintf(w, "%-9s %6d turns in %5.1fs = %7.1f turns/s  e2e p50 %7s p90 %7s p99 %7s  first token p50 %7s p99 %7s  errors %d\n",
		name, r.Turns, r.Elapsed.Seconds(), r.TurnsPerSecond(),
		ms(Quantile(r.E2E, .5)), ms(Quantile(r.E2E, .9)), ms(Quantile(r.E2E, .99)),
		ms(Quantile(r.FirstByte, .5)), ms(Quantile(r.FirstByte, .99)), r.Errors)
	if r.CPU > 0 && r.Turns > 0 && r.Elapsed > 0 {
		fmt.Fprintf(w, "%-9s CPU %.2f ms a turn in this process (%.0f%% of one CPU, %d CPUs)", "", float64(r.CPU)/float64(r.Turns)/1e6,
			100*r.CPU.Seconds()/r.Elapsed.Seconds(), runtime.NumCPU())
		if r.Written >= 0 {
			fmt.Fprintf(w, "; %.1f KB a turn written to storage", float64(r.Written)/float64(r.Turns)/1024)
		}
		if r.Allocated > 0 {
			fmt.Fprintf(w, "; %.1f KB a turn allocated, %.1f GCs a second", float64(r.Allocated)/float64(r.Turns)/1024,
				float64(r.GCs)/r.Elapsed.Seconds())
		}
		fmt.Fprintln(w)
	}
	for _, e := range r.ErrorText {
		fmt.Fprintf(w, "          error: %s\n", e)
	}
}

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(100 * time.Microsecond).String()
}
