package orchestrator

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"slices"
	"time"

	"github.com/purser-ai/purser/pkg/contracts"
)

// Bounds of one turn.
const (
	MaxSteps        = 5               // tool steps per turn
	TurnBudget      = 2 * time.Minute // wall clock per turn
	ProposalTTL     = 24 * time.Hour  // how long a proposal waits for a yes, unless Env.ProposalTTL says otherwise
	maxApplied      = 256             // applied event ids remembered
	maxHistory      = 24              // stored history entries at most: the open exchange and a little more (the rest is the conversation's frames)
	minHistory      = 4               // stored history entries at least, open exchange or not
	maxQueued       = 20              // turns waiting behind running tools
	maxMemoryValues = 32
	maxExpired      = 5 // expired proposals remembered
)

// State is one conversation as the orchestrator keeps it. It is plain data:
// every change goes through Transition.
type State struct {
	UserID   string   `json:"user_id"`
	Roles    []string `json:"roles,omitempty"`
	Timezone string   `json:"timezone,omitempty"`
	Locale   string   `json:"locale,omitempty"`
	History  []Entry  `json:"history"`
	// Earlier says History lost older entries: the prompt tells the model
	// there is more to read with get_chat_history.
	Earlier   bool              `json:"earlier,omitempty"`
	Memory    Memory            `json:"memory,omitempty"`
	Turn      *Turn             `json:"turn,omitempty"`
	Proposals []PendingProposal `json:"proposals,omitempty"`
	// Expired are the latest proposals nobody approved in time (at most
	// maxExpired): approving one says so and offers it again.
	Expired []PendingProposal `json:"expired,omitempty"`
	// Reoffer is an expired proposal offered again, which a yes proposes
	// anew with the same args.
	Reoffer *PendingProposal `json:"reoffer,omitempty"`
	// Retry is the call that last ran past its deadline (timed_out), which
	// "try again" runs once more: a read at once, a change as a new
	// proposal.
	Retry   *Call                `json:"retry,omitempty"`
	Queue   []contracts.UserTurn `json:"queue,omitempty"`
	Applied []string             `json:"applied"`
	Updated time.Time            `json:"updated"`
}

// Memory is the working memory of a conversation: tool outputs kept under
// keys such as "lists.expenses", "entities.message", "ids.message_id" and
// "params.range", for later steps and plans to reference.
type Memory map[string]json.RawMessage

// Entry is one line of history.
type Entry struct {
	Role   string    `json:"role"` // user | assistant | tool
	Text   string    `json:"text"`
	TurnID string    `json:"turn_id"`
	At     time.Time `json:"at"`
	// Open marks an assistant entry that waits for the person's reply:
	// a clarifying question or a proposal. The reply continues its
	// exchange, so the prompt keeps both.
	Open bool `json:"open,omitempty"`
}

// Turn is the turn in progress.
type Turn struct {
	TurnID string `json:"turn_id"` // the input whose outputs this turn emits now
	Text   string `json:"text"`
	// Upload is the file the person sent with the turn's text, if any.
	Upload    *contracts.Upload `json:"upload,omitempty"`
	StartedAt time.Time         `json:"started_at"`
	Steps     []StepRecord      `json:"steps,omitempty"`
	Open      []OpenCall        `json:"open,omitempty"`
	StepsUsed int               `json:"steps_used"`
	Replanned bool              `json:"replanned,omitempty"`
	Corrected bool              `json:"corrected,omitempty"`
	// Correction and Failure are shown to the model on its next call.
	Correction string `json:"correction,omitempty"`
	Failure    string `json:"failure,omitempty"`
	// RetryAfter is a failed step's rate limit (seconds); a turn that ends
	// on it says when to ask again.
	RetryAfter int        `json:"retry_after,omitempty"`
	Plan       *PlanState `json:"plan,omitempty"`
	Round      int        `json:"round"`
	// Model is the model call the turn waits for, if any: durable, so a
	// call lost to a crash is made again.
	Model *ModelCall `json:"model,omitempty"`
	// Checking is a decision waiting for the reads that look up what its
	// changes touch, if any.
	Checking *Checking `json:"checking,omitempty"`
	// Batch is the proposals an approve_all runs, in the order named: the
	// turn ends with each one's outcome once every call is back, asking
	// the model nothing.
	Batch []string `json:"batch,omitempty"`
}

// Checking is a decision's calls, canonical, held while the reads that look
// up what its changes touch run: once every read is back, its changes are
// proposed showing what they touch, or, when one names something that
// does not exist, the turn answers so and proposes nothing. Reads[i] is the
// call id of the read for Calls[i], "" for a call that needs none. Plan and
// SaveAs are what the proposal carries when a plan step made the change.
type Checking struct {
	Calls  []Call     `json:"calls"`
	Reads  []string   `json:"reads"`
	Plan   *PlanState `json:"plan,omitempty"`
	SaveAs string     `json:"save_as,omitempty"`
}

// OpenCall is a tool call in flight.
type OpenCall struct {
	CallID     string          `json:"call_id"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	ProposalID string          `json:"proposal_id,omitempty"`
	SaveAs     string          `json:"save_as,omitempty"`
	Decision   string          `json:"decision,omitempty"` // approved | edited
	Edited     json.RawMessage `json:"edited,omitempty"`
	// Check marks a read that looks up what a change touches before it is
	// proposed: its result is for the proposal, not working memory.
	Check bool `json:"check,omitempty"`
}

// PlanState is a plan being run.
type PlanState struct {
	Steps    []PlanStep     `json:"steps"`
	Next     int            `json:"next"`
	StopWhen *StopCondition `json:"stop_when,omitempty"`
}

// PendingProposal is a change waiting for the person's decision.
type PendingProposal struct {
	ID        string          `json:"id"`
	TurnID    string          `json:"turn_id"`
	Text      string          `json:"text"` // the request that led to it
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args"` // canonical
	Summary   string          `json:"summary"`
	Revision  int             `json:"revision"`
	ExpiresAt time.Time       `json:"expires_at"`
	// Plan is what is left of the plan that reached this change, carried
	// on once the person says yes; SaveAs keeps the change's result for it.
	Plan   *PlanState `json:"plan,omitempty"`
	SaveAs string     `json:"save_as,omitempty"`
	// Seen is the result of the read that looked up what the change
	// touches, if one did: an edit's summary shows it again.
	Seen json.RawMessage `json:"seen,omitempty"`
	// WarnAt is when the person is told the proposal is about to expire;
	// Warned, that they were.
	WarnAt time.Time `json:"warn_at,omitzero"`
	Warned bool      `json:"warned,omitempty"`
}

// appliedKey is how Applied remembers a turn id: 64 bits of its SHA-256
// in 11 characters of base64, where the id takes 33. The state is written
// again with every event of its conversation, and 256 whole ids were 9.5
// KB of it once a conversation had that many turns, against 3.6 KB of
// keys. Two of a conversation's last 256 turns share a key with odds of
// about 1 in 5*10^14.
func appliedKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return base64.RawURLEncoding.EncodeToString(sum[:8])
}

// hasApplied says whether the turn id was applied. A state stored before
// keys holds whole ids, which it matches too until they age out.
func (s State) hasApplied(id string) bool {
	k := appliedKey(id)
	for _, a := range s.Applied {
		if a == k || a == id {
			return true
		}
	}
	return false
}

// withApplied records that the event id was applied at now.
func (s State) withApplied(id string, now time.Time) State {
	s.Applied = append(slices.Clone(s.Applied), appliedKey(id))
	if n := len(s.Applied); n > maxApplied {
		s.Applied = s.Applied[n-maxApplied:]
	}
	s.Updated = now
	return s
}

// withHistory appends e and keeps only what a prompt can ask for
// (historyNeeded): the state is decoded and encoded again for every event
// of the conversation, and written with it, so it holds no more history
// than the next prompt shows.
func (s State) withHistory(e ...Entry) State {
	// A copy with room for e: a clone of its own length would be copied
	// again by the append.
	h := make([]Entry, len(s.History), len(s.History)+len(e))
	copy(h, s.History)
	s.History = append(h, e...)
	if from := historyNeeded(s.History); from > 0 {
		s.History = s.History[from:]
		s.Earlier = true
	}
	return s
}

// historyNeeded is where the part of h that PromptFor may read begins:
// the open exchange before the trailing entries of h's last turn (that
// turn's own entries are the prompt's text while it runs), or before none
// of them (while another turn runs), and the entry just before it, which
// ends the exchange's walk back; at least the last minHistory entries,
// and at most maxHistory.
func historyNeeded(h []Entry) int {
	if len(h) == 0 {
		return 0
	}
	past := len(h)
	for past > 0 && h[past-1].TurnID == h[len(h)-1].TurnID {
		past--
	}
	from := min(len(h)-len(openExchange(h)), past-len(openExchange(h[:past])))
	from = min(from-1, len(h)-minHistory)
	return max(from, len(h)-maxHistory, 0)
}

// clone copies everything a transition may change in place.
func (s State) clone() State {
	s.History = slices.Clone(s.History)
	s.Proposals = slices.Clone(s.Proposals)
	s.Expired = slices.Clone(s.Expired)
	s.Queue = slices.Clone(s.Queue)
	s.Applied = slices.Clone(s.Applied)
	if s.Memory != nil {
		m := make(Memory, len(s.Memory))
		for k, v := range s.Memory {
			m[k] = v
		}
		s.Memory = m
	}
	if s.Turn != nil {
		t := *s.Turn
		t.Steps = slices.Clone(t.Steps)
		t.Open = slices.Clone(t.Open)
		t.Batch = slices.Clone(t.Batch)
		if t.Plan != nil {
			p := *t.Plan
			t.Plan = &p
		}
		if t.Model != nil {
			m := *t.Model
			t.Model = &m
		}
		s.Turn = &t
	}
	return s
}
