package ingress

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// step is one input to a sequencer, as order.go's client methods give it.
type step struct {
	op   string // live, again, endInitial, startCatchUp, caughtUp, release, refill, retrying, fillDone
	seq  int64  // the frame's seq (live, again), or last (caughtUp)
	want string // the decision, as seqLog writes it
}

// run feeds steps to s and fails at the first decision that differs.
func run(t *testing.T, s *sequencer, steps []step) {
	t.Helper()
	for i, st := range steps {
		var got string
		switch st.op {
		case "live", "again":
			act, after := s.live(&outFrame{seq: st.seq, again: st.op == "again"})
			got = [...]string{"drop", "send", "hold", "fill", "overflow"}[act]
			if act == actFill {
				got += fmt.Sprintf(" after %d", after)
			}
		case "endInitial":
			got = fmt.Sprint(s.endInitial())
		case "startCatchUp":
			s.startCatchUp()
		case "caughtUp":
			s.caughtUp(st.seq)
		case "release":
			var seqs []string
			for batch := s.release(); batch != nil; batch = s.release() {
				for _, f := range batch {
					seqs = append(seqs, fmt.Sprint(f.seq))
				}
			}
			got = "[" + strings.Join(seqs, " ") + "]"
		case "refill":
			after, ok := s.refill()
			got = fmt.Sprint(ok, " ", after)
		case "retrying":
			s.retrying()
		case "fillDone":
			s.fillDone()
		default:
			t.Fatalf("step %d: unknown op %q", i, st.op)
		}
		if got != st.want {
			t.Fatalf("step %d (%s %d): got %q, want %q", i, st.op, st.seq, got, st.want)
		}
	}
}

func TestSequencer(t *testing.T) {
	tests := []struct {
		name    string
		hold    bool
		maxHeld int
		give    []step
		// wantPhase, wantDelivered and wantReplayed are the state after.
		wantPhase     phase
		wantDelivered int64
		wantReplayed  int64
	}{
		{
			name:      "live frames go out in order",
			give:      []step{{"live", 1, "send"}, {"live", 2, "send"}, {"live", 0, "send"}, {"live", 3, "send"}},
			wantPhase: phaseLive, wantDelivered: 3,
		},
		{
			name:      "the first frame may start anywhere",
			give:      []step{{"live", 41, "send"}, {"live", 42, "send"}},
			wantPhase: phaseLive, wantDelivered: 42,
		},
		{
			name: "a gap holds the frame and fills from the last one sent",
			give: []step{{"live", 1, "send"}, {"live", 4, "fill after 1"}, {"live", 5, "hold"},
				{"caughtUp", 3, ""}, {"release", 0, "[4 5]"}, {"fillDone", 0, ""}, {"live", 6, "send"}},
			wantPhase: phaseLive, wantDelivered: 6, wantReplayed: 3,
		},
		{
			name: "the fill replayed a held frame: it is not sent twice",
			give: []step{{"live", 1, "send"}, {"live", 3, "fill after 1"}, {"live", 2, "hold"},
				{"caughtUp", 3, ""}, {"release", 0, "[]"}, {"fillDone", 0, ""}},
			wantPhase: phaseLive, wantDelivered: 3, wantReplayed: 3,
		},
		{
			name: "no second fill while one runs",
			give: []step{{"live", 1, "send"}, {"live", 3, "fill after 1"}, {"caughtUp", 3, ""}, {"release", 0, "[]"},
				{"live", 9, "send"}},
			wantPhase: phaseLive, wantDelivered: 9, wantReplayed: 3,
		},
		{
			name:      "tokens (no seq) never open a gap",
			give:      []step{{"live", 1, "send"}, {"live", 0, "send"}, {"live", 2, "send"}},
			wantPhase: phaseLive, wantDelivered: 2,
		},
		{
			name: "the initial hold keeps live frames until it ends",
			hold: true,
			give: []step{{"live", 1, "hold"}, {"live", 2, "hold"}, {"endInitial", 0, "true"}, {"release", 0, "[1 2]"},
				{"endInitial", 0, "false"}, {"live", 3, "send"}},
			wantPhase: phaseLive, wantDelivered: 3,
		},
		{
			name: "a resume takes over the initial hold and drops what it replayed",
			hold: true,
			give: []step{{"live", 5, "hold"}, {"live", 6, "hold"}, {"startCatchUp", 0, ""}, {"endInitial", 0, "false"},
				{"live", 7, "hold"}, {"caughtUp", 6, ""}, {"release", 0, "[7]"}, {"live", 6, "drop"}, {"live", 8, "send"}},
			wantPhase: phaseLive, wantDelivered: 8, wantReplayed: 6,
		},
		{
			name:      "a frame sent again on purpose passes a replayed seq",
			give:      []step{{"startCatchUp", 0, ""}, {"caughtUp", 4, ""}, {"release", 0, "[]"}, {"again", 3, "send"}, {"live", 3, "drop"}},
			wantPhase: phaseLive, wantDelivered: 4, wantReplayed: 4,
		},
		{
			name:      "a hold past its bound overflows",
			hold:      true,
			maxHeld:   2,
			give:      []step{{"live", 1, "hold"}, {"live", 2, "hold"}, {"live", 3, "overflow"}},
			wantPhase: phaseInitial,
		},
		{
			name: "a failed catch-up keeps holding until a retry succeeds",
			give: []step{{"live", 1, "send"}, {"startCatchUp", 0, ""}, {"caughtUp", 2, ""}, {"retrying", 0, ""},
				{"live", 3, "hold"}, {"refill", 0, "false 0"}, {"caughtUp", 4, ""}, {"release", 0, "[]"}, {"fillDone", 0, ""}},
			wantPhase: phaseLive, wantDelivered: 4, wantReplayed: 4,
		},
		{
			name: "a reconnect refills from the last frame sent",
			give: []step{{"live", 1, "send"}, {"live", 2, "send"}, {"refill", 0, "true 2"}, {"refill", 0, "false 0"},
				{"live", 5, "send"}},
			wantPhase: phaseLive, wantDelivered: 5,
		},
		{
			name:      "no refill before the first frame or during the initial hold",
			hold:      true,
			give:      []step{{"refill", 0, "false 0"}, {"caughtUp", 3, ""}, {"refill", 0, "false 0"}},
			wantPhase: phaseInitial, wantDelivered: 3, wantReplayed: 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			maxHeld := tt.maxHeld
			if maxHeld == 0 {
				maxHeld = 16
			}
			s := newSequencer(tt.hold, maxHeld)
			run(t, &s, tt.give)
			if s.phase != tt.wantPhase || s.delivered != tt.wantDelivered || s.replayed != tt.wantReplayed {
				t.Errorf("state = phase %d delivered %d replayed %d, want phase %d delivered %d replayed %d",
					s.phase, s.delivered, s.replayed, tt.wantPhase, tt.wantDelivered, tt.wantReplayed)
			}
		})
	}
}

func TestRetryFrom(t *testing.T) {
	tests := []struct {
		name     string
		replayed int64
		give     int64
		want     int64
	}{
		{"nothing replayed since", 0, 7, 7},
		{"a resume covered more meanwhile", 12, 7, 12},
		{"a resume covered less", 3, 7, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sequencer{replayed: tt.replayed}
			if got := s.retryFrom(tt.give); got != tt.want {
				t.Errorf("retryFrom(%d) = %d, want %d", tt.give, got, tt.want)
			}
		})
	}
}

func TestNextRetry(t *testing.T) {
	tests := []struct {
		give time.Duration
		want time.Duration
	}{
		{firstRetry, 500 * time.Millisecond},
		{time.Second, 2 * time.Second},
		{3 * time.Second, lastRetry},
		{lastRetry, lastRetry},
	}
	for _, tt := range tests {
		if got := nextRetry(tt.give); got != tt.want {
			t.Errorf("nextRetry(%v) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
