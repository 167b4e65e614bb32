package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Stream names.
const (
	StreamTurns  = "TURNS"
	StreamTools  = "TOOLS"
	StreamAgent  = "AGENT"
	StreamNotify = "NOTIFY"
	StreamDLQ    = "DLQ"
	// StreamUploads holds files people upload, in chunks, until the
	// toolrunner reads them (subjects purser.upload.<tenant>.<user>.<document>.<part>).
	StreamUploads = "UPLOADS"
)

// Consumer names (no dots: NATS forbids them).
const (
	ConsumerOrchestratorTurns       = "orchestrator-turns"
	ConsumerOrchestratorToolResults = "orchestrator-tool-results"
	ConsumerNotifierAgent           = "notifier-agent"
	ConsumerNotifierNotify          = "notifier-notify"
)

// TurnPartitions is how many lanes TURNS has. The stream maps each
// conversation to one lane (a subject transform), so that replicas can
// split lanes between them later; within a process the subscriber keeps
// a conversation's turns in order by its order key, and many
// conversations of one lane run at once.
const TurnPartitions = 8

// Defaults for every consumer. The ack wait is short so that a message
// held by a process that died is redelivered within seconds; a live
// process keeps its messages with InProgress every third of it. TURNS
// lanes have shorter ones still (LaneAckWait).
const (
	DefaultAckWait    = 5 * time.Second
	DefaultMaxDeliver = 5
	// ServerMaxDeliver is the server's own bound on deliveries of one
	// message. It is far above MaxDeliver because deliveries that never
	// reached a verdict (the process died, the ack was lost while NATS
	// restarted, the bus was down for the handler) count too, and a
	// message the server stops delivering is neither handled nor
	// dead-lettered: it strands its turn. MaxDeliver, counted by the
	// subscriber, is what dead-letters a message its handler refuses.
	ServerMaxDeliver = 100
	// DefaultMaxAckPending bounds the messages of one consumer out at
	// once across replicas.
	DefaultMaxAckPending = 1024
)

// DefaultBackOff spaces redeliveries after a nak.
var DefaultBackOff = []time.Duration{time.Second, 5 * time.Second, 15 * time.Second, 30 * time.Second}

// ConsumerDef is one durable consumer.
type ConsumerDef struct {
	Name          string
	Stream        string
	Filter        string
	AckWait       time.Duration
	MaxDeliver    int
	MaxAckPending int
	// BackOff spaces redeliveries after a failed attempt; DefaultBackOff
	// when empty.
	BackOff []time.Duration
	// OrderKey lists the subject tokens (by index, 0 is "purser") whose
	// values, joined, name what must be handled in order: a
	// conversation, a user. Messages with the same key are handled one at
	// a time in delivery order; empty means no order at all.
	OrderKey []int
	// Pinned lets one process at a time take the consumer's messages (a
	// JetStream priority group with the pinned policy): it keeps order
	// per key across replicas, which a process's own order key cannot.
	// A process that stops gives the pin up once it has handed back what
	// it held, and another replica takes over at its next pull; one that
	// dies loses the pin PinnedTTL after its last pull.
	Pinned bool
	// PinnedTTL and PullRenew override the package's for this consumer
	// (zero: PinnedTTL, PullRenew); PullRenew is at least 1 s (nats.go).
	PinnedTTL time.Duration
	PullRenew time.Duration
}

// Pinned consumers: the priority group every puller names, how often an
// idle puller renews its pull (and so its pin; nats.go allows no less
// than 1 s), and how long a pin lasts without a pull. A live holder
// renews at least every PullRenew, so a pin is lost only to a process
// that stalled for PinnedTTL-PullRenew or died: another replica then
// takes the lane within PinnedTTL of the last pull.
//
// LaneAckWait, the ack wait of TURNS lanes, is at most
// PinnedTTL-PullRenew, so that the messages a dead holder held are due
// again (at most LaneAckWait after its last InProgress) before its pin
// lapses (at least PinnedTTL-PullRenew after its last pull): the next
// holder gets them first, ahead of newer turns of their conversations.
//
// What keeps two replicas from applying one conversation's events at
// once is not the pin, which a stalled process can lose while it still
// holds messages, but the store: a conversation is saved with the
// version it was loaded at (store.ErrConflict otherwise, nothing stored),
// and an applied turn is recorded in that same save, so the slower of
// two replicas reloads, finds the turn applied, and does nothing.
const (
	pinGroup    = "pinned"
	PullRenew   = time.Second
	PinnedTTL   = 2 * PullRenew
	LaneAckWait = PinnedTTL - PullRenew
)

func (d ConsumerDef) pinnedTTL() time.Duration {
	if d.PinnedTTL > 0 {
		return d.PinnedTTL
	}
	return PinnedTTL
}

func (d ConsumerDef) pullRenew() time.Duration {
	if d.PullRenew > 0 {
		return d.PullRenew
	}
	return PullRenew
}

// orderKey is the order key of a message on subject, or "" for none. A
// subject too short for the key is its own key (it is serialised with
// nothing else, and its handler rejects it).
func (d ConsumerDef) orderKey(subject string) string {
	if len(d.OrderKey) == 0 {
		return ""
	}
	tokens := strings.Split(subject, ".")
	parts := make([]string, 0, len(d.OrderKey))
	for _, i := range d.OrderKey {
		if i >= len(tokens) {
			return subject
		}
		parts = append(parts, tokens[i])
	}
	return strings.Join(parts, ".")
}

func (d ConsumerDef) backOff(delivered int) time.Duration {
	b := d.BackOff
	if len(b) == 0 {
		b = DefaultBackOff
	}
	return b[max(0, min(delivered-1, len(b)-1))]
}

func (d ConsumerDef) config() jetstream.ConsumerConfig {
	c := jetstream.ConsumerConfig{
		Durable:       d.Name,
		Description:   "purser " + d.Name,
		FilterSubject: d.Filter,
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckWait:       d.AckWait,
		MaxDeliver:    max(d.MaxDeliver, ServerMaxDeliver),
		MaxAckPending: d.MaxAckPending,
	}
	if d.Pinned {
		c.PriorityGroups = []string{pinGroup}
		c.PriorityPolicy = jetstream.PriorityPolicyPinned
		c.PinnedTTL = d.pinnedTTL()
	}
	return c
}

func consumer(name, stream, filter string, maxAckPending int, orderKey ...int) ConsumerDef {
	return ConsumerDef{Name: name, Stream: stream, Filter: filter, AckWait: DefaultAckWait, MaxDeliver: DefaultMaxDeliver,
		MaxAckPending: maxAckPending, OrderKey: orderKey}
}

// Order keys by subject: purser.turns.<lane>.<tenant>.<conversation> and
// purser.tool.result.<tenant>.<conversation> by conversation (the same
// key, so a conversation's turns and tool results take turns too; two
// users who use the same conversation id share a key, which costs them
// only parallelism);
// purser.agent.<tenant>.<user>.<conversation> and
// purser.notify.<tenant>.<user> by user, whose frames carry an increasing
// seq.
var (
	turnOrder       = []int{3, 4}
	toolResultOrder = []int{3, 4}
	agentOrder      = []int{2, 3}
	notifyOrder     = []int{2, 3}
)

// StreamConfigs are the six streams of DESIGN.md with the default
// tunables (Streams(DefaultStreamTunables())).
func StreamConfigs() []jetstream.StreamConfig { return Streams(DefaultStreamTunables()) }

// streamDefs are the settings of the six streams that purser depends on;
// the tunables (replicas, bounds) are added by Streams. TURNS refuses new
// turns when full (the ingress answers "busy") rather than dropping
// unprocessed ones; the others, whose messages stay after they are
// consumed, drop their oldest.
func streamDefs() []jetstream.StreamConfig {
	return []jetstream.StreamConfig{
		{Name: StreamTurns, Subjects: []string{"purser.turns.*.*"}, Storage: jetstream.FileStorage, Retention: jetstream.WorkQueuePolicy,
			Discard: jetstream.DiscardNew, Duplicates: 2 * time.Minute, Description: "UserTurns, one lane per conversation hash",
			SubjectTransform: &jetstream.SubjectTransformConfig{Source: "purser.turns.*.*",
				Destination: "purser.turns.{{partition(" + strconv.Itoa(TurnPartitions) + ",1,2)}}.{{wildcard(1)}}.{{wildcard(2)}}"}},
		{Name: StreamTools, Subjects: []string{"purser.tool.request.*", "purser.tool.result.*.*", "purser.import.*.*"}, Storage: jetstream.FileStorage,
			Retention: jetstream.LimitsPolicy, Discard: jetstream.DiscardOld, Duplicates: 2 * time.Minute, Description: "ToolRequests, ToolResults and statement ImportJobs"},
		{Name: StreamAgent, Subjects: []string{"purser.agent.*.*.*"}, Storage: jetstream.FileStorage, Retention: jetstream.LimitsPolicy,
			Discard: jetstream.DiscardOld, Duplicates: 2 * time.Minute, Description: "Clarify, Proposal, ToolProgress, Answer, TurnError"},
		{Name: StreamNotify, Subjects: []string{"purser.notify.*.*"}, Storage: jetstream.FileStorage, Retention: jetstream.LimitsPolicy,
			Discard: jetstream.DiscardOld, Duplicates: 2 * time.Minute, Description: "Notifications"},
		{Name: StreamDLQ, Subjects: []string{"purser.dlq.*"}, Storage: jetstream.FileStorage, Retention: jetstream.LimitsPolicy,
			Discard: jetstream.DiscardOld, Duplicates: 2 * time.Minute, Description: "Messages that failed past their retries, reason in headers"},
		// Uploads refuse new files when full rather than drop ones that
		// may still be waiting for the person's yes; each part is read by
		// its subject (direct get), never consumed.
		{Name: StreamUploads, Subjects: []string{"purser.upload.*.*.*.*"}, Storage: jetstream.FileStorage, Retention: jetstream.LimitsPolicy,
			Discard: jetstream.DiscardNew, Duplicates: 2 * time.Minute, AllowDirect: true, MaxMsgsPerSubject: 1,
			Description: "Uploaded files in parts, each part under its own subject"},
	}
}

// OrchestratorConsumers are the orchestrator's: one per TURNS lane and
// the tool results, each with many messages out, in order per
// conversation. A lane is pinned to one replica at a time, so that a
// conversation's turns are applied in order however many replicas run;
// lanes spread conversations over replicas. Tool results need no pin: the
// results a turn waits for may apply in any order.
func OrchestratorConsumers() []ConsumerDef {
	defs := make([]ConsumerDef, 0, TurnPartitions+1)
	for p := range TurnPartitions {
		d := consumer(TurnConsumerName(p), StreamTurns, "purser.turns."+strconv.Itoa(p)+".>",
			DefaultMaxAckPending/TurnPartitions, turnOrder...)
		d.Pinned = true
		d.AckWait = LaneAckWait
		defs = append(defs, d)
	}
	return append(defs, consumer(ConsumerOrchestratorToolResults, StreamTools, "purser.tool.result.>", DefaultMaxAckPending, toolResultOrder...))
}

// TurnConsumerName names the consumer of TURNS lane p.
func TurnConsumerName(p int) string { return ConsumerOrchestratorTurns + "-" + strconv.Itoa(p) }

// NotifierConsumers are the notifier's.
func NotifierConsumers() []ConsumerDef {
	return []ConsumerDef{
		consumer(ConsumerNotifierAgent, StreamAgent, "purser.agent.>", DefaultMaxAckPending, agentOrder...),
		consumer(ConsumerNotifierNotify, StreamNotify, "purser.notify.>", DefaultMaxAckPending, notifyOrder...),
	}
}

// ToolConsumer is the durable consumer of one tool's requests, so a heavy
// tool can have replicas of its own.
func ToolConsumer(tool string) ConsumerDef {
	return consumer("toolrunner-"+tool, StreamTools, "purser.tool.request."+tool, 256)
}

// ConsumerImports is the statement importer's durable consumer.
const ConsumerImports = "toolrunner-imports"

// ImportConsumer consumes ImportJobs. Parsing is slow and runs in a child
// process; the subscriber's in-progress heartbeats hold the job meanwhile.
func ImportConsumer() ConsumerDef {
	return consumer(ConsumerImports, StreamTools, "purser.import.>", 4)
}

// Provision creates every missing stream (EnsureStreams with the default
// tunables: an existing stream is checked, never changed) and creates or
// updates the given consumers. It is idempotent and safe to run from
// several processes at once; nothing is ever auto-provisioned elsewhere.
func Provision(ctx context.Context, js jetstream.JetStream, consumers ...ConsumerDef) error {
	if _, err := EnsureStreams(ctx, js, DefaultStreamTunables()); err != nil {
		return err
	}
	for _, d := range consumers {
		if err := retryCreate(ctx, func() error {
			_, err := js.CreateOrUpdateConsumer(ctx, d.Stream, d.config())
			if err != nil && d.Pinned && unpinned(ctx, js, d) {
				// A consumer made before it was pinned cannot take a
				// priority policy: replace it. Its unacked messages stay in
				// the stream and the new consumer delivers them.
				if derr := js.DeleteConsumer(ctx, d.Stream, d.Name); derr == nil {
					_, err = js.CreateOrUpdateConsumer(ctx, d.Stream, d.config())
				}
			}
			return err
		}); err != nil {
			return fmt.Errorf("consumer %s: %w", d.Name, err)
		}
	}
	return nil
}

// unpinned reports whether d's consumer exists without a priority policy.
func unpinned(ctx context.Context, js jetstream.JetStream, d ConsumerDef) bool {
	c, err := js.Consumer(ctx, d.Stream, d.Name)
	return err == nil && c.CachedInfo().Config.PriorityPolicy != jetstream.PriorityPolicyPinned
}

// retryCreate retries the races of concurrent provisioning (two replicas
// creating the same stream at once).
func retryCreate(ctx context.Context, f func() error) error {
	var err error
	for attempt := range 5 {
		if err = f(); err == nil || errors.Is(err, context.Canceled) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 100 * time.Millisecond):
		}
	}
	return err
}
