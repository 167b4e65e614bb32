package bus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamTunables are the stream settings an operator owns: how many
// replicas each stream keeps and how much it may hold. A missing stream
// is created with them; an existing stream keeps whatever it has until
// `purser streams apply` changes it.
type StreamTunables struct {
	// Replicas is every stream's replica count (1 to 5).
	Replicas int
	// MaxBytes and MaxAge bound each stream. The key is a stream name;
	// "" applies to every stream not named; a stream named by neither
	// has its default (DefaultMaxBytes, DefaultMaxAge).
	MaxBytes map[string]int64
	MaxAge   map[string]time.Duration
}

// DefaultStreamTunables are one replica and every stream's default bounds.
func DefaultStreamTunables() StreamTunables { return StreamTunables{Replicas: 1} }

// DefaultMaxBytes bounds each stream unless configured: small enough that
// the six fit a laptop's disk together (JetStream reserves them at
// creation), large enough for days of traffic of a small deployment.
var DefaultMaxBytes = map[string]int64{
	StreamTurns:  256 << 20,
	StreamTools:  512 << 20,
	StreamAgent:  512 << 20,
	StreamNotify: 256 << 20,
	StreamDLQ:    128 << 20,
	// Uploads are files of up to 20 MiB each, waiting to be read and
	// approved.
	StreamUploads: 512 << 20,
}

// DefaultMaxAge is how long each stream keeps a message unless configured.
var DefaultMaxAge = map[string]time.Duration{
	StreamTurns:  7 * 24 * time.Hour,
	StreamTools:  7 * 24 * time.Hour,
	StreamAgent:  7 * 24 * time.Hour,
	StreamNotify: 30 * 24 * time.Hour,
	StreamDLQ:    14 * 24 * time.Hour,
	// An upload nobody imported is gone after this long; an imported one
	// lives on in its document record.
	StreamUploads: 7 * 24 * time.Hour,
}

// StreamNames are the six streams, in provisioning order.
func StreamNames() []string {
	return []string{StreamTurns, StreamTools, StreamAgent, StreamNotify, StreamDLQ, StreamUploads}
}

func (t StreamTunables) replicas() int {
	if t.Replicas <= 0 {
		return 1
	}
	return t.Replicas
}

func (t StreamTunables) maxBytes(stream string) int64 {
	if v, ok := t.MaxBytes[stream]; ok {
		return v
	}
	if v, ok := t.MaxBytes[""]; ok {
		return v
	}
	return DefaultMaxBytes[stream]
}

func (t StreamTunables) maxAge(stream string) time.Duration {
	if v, ok := t.MaxAge[stream]; ok {
		return v
	}
	if v, ok := t.MaxAge[""]; ok {
		return v
	}
	return DefaultMaxAge[stream]
}

// Streams are the six streams of DESIGN.md with the tunables t.
func Streams(t StreamTunables) []jetstream.StreamConfig {
	out := streamDefs()
	for i := range out {
		out[i].Replicas = t.replicas()
		out[i].MaxBytes = t.maxBytes(out[i].Name)
		out[i].MaxAge = t.maxAge(out[i].Name)
	}
	return out
}

// Change is one setting of a stream that differs between the server
// (Have) and purser's definition or configuration (Want).
type Change struct {
	Setting string
	Have    string
	Want    string
}

func (c Change) String() string { return fmt.Sprintf("%s: %s -> %s", c.Setting, c.Have, c.Want) }

// StreamPlan is what `purser streams apply` would do to one stream.
type StreamPlan struct {
	Name string
	// Missing says the stream does not exist yet.
	Missing bool
	// Required are differences in settings purser depends on (subjects,
	// retention, storage, the lane transform, a duplicate window at least
	// purser's):
	// a service refuses to start while any remain.
	Required []Change
	// Tunable are differences in the operator's settings (replicas,
	// bounds, discard policy): reported, never changed at start.
	Tunable []Change
	// Want is the configuration apply would send: the server's own with
	// every setting purser manages replaced.
	Want jetstream.StreamConfig
}

// Changed reports whether apply would do anything to the stream.
func (p StreamPlan) Changed() bool { return p.Missing || len(p.Required) > 0 || len(p.Tunable) > 0 }

// PlanStreams compares each stream on the server with its definition and
// the tunables t. It changes nothing.
func PlanStreams(ctx context.Context, js jetstream.JetStream, t StreamTunables) ([]StreamPlan, error) {
	var plans []StreamPlan
	for _, want := range Streams(t) {
		p, err := planStream(ctx, js, want)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

func planStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig) (StreamPlan, error) {
	s, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return StreamPlan{Name: want.Name, Missing: true, Want: want}, nil
	}
	if err != nil {
		return StreamPlan{}, fmt.Errorf("stream %s: %w", want.Name, err)
	}
	return diffStream(s.CachedInfo().Config, want), nil
}

// diffStream compares the server's configuration have with want.
func diffStream(have, want jetstream.StreamConfig) StreamPlan {
	p := StreamPlan{Name: want.Name}
	req := func(setting, h, w string) {
		if h != w {
			p.Required = append(p.Required, Change{setting, h, w})
		}
	}
	tun := func(setting, h, w string) {
		if h != w {
			p.Tunable = append(p.Tunable, Change{setting, h, w})
		}
	}
	hs, ws := slices.Clone(have.Subjects), slices.Clone(want.Subjects)
	slices.Sort(hs)
	slices.Sort(ws)
	req("subjects", strings.Join(hs, ","), strings.Join(ws, ","))
	req("retention", have.Retention.String(), want.Retention.String())
	req("storage", have.Storage.String(), want.Storage.String())
	req("subject_transform", transformString(have.SubjectTransform), transformString(want.SubjectTransform))
	// A longer duplicate window than purser's only drops more republished
	// duplicates: an operator may raise it, never lower it.
	if have.Duplicates < want.Duplicates {
		req("duplicate_window", have.Duplicates.String(), want.Duplicates.String())
	}
	tun("replicas", strconv.Itoa(max(have.Replicas, 1)), strconv.Itoa(want.Replicas))
	tun("max_bytes", FormatBytes(have.MaxBytes), FormatBytes(want.MaxBytes))
	tun("max_age", FormatAge(have.MaxAge), FormatAge(want.MaxAge))
	tun("discard", have.Discard.String(), want.Discard.String())

	merged := have
	merged.Subjects = want.Subjects
	merged.Retention = want.Retention
	merged.Storage = want.Storage
	merged.SubjectTransform = want.SubjectTransform
	merged.Duplicates = max(have.Duplicates, want.Duplicates)
	merged.Replicas = want.Replicas
	merged.MaxBytes = want.MaxBytes
	merged.MaxAge = want.MaxAge
	merged.Discard = want.Discard
	p.Want = merged
	return p
}

func transformString(t *jetstream.SubjectTransformConfig) string {
	if t == nil {
		return "none"
	}
	return t.Source + " => " + t.Destination
}

// StreamsError lists the streams whose required settings differ.
type StreamsError struct{ Plans []StreamPlan }

func (e *StreamsError) Error() string {
	var b strings.Builder
	b.WriteString("streams differ from what purser needs (run `purser streams apply` to see and fix):")
	for _, p := range e.Plans {
		for _, c := range p.Required {
			fmt.Fprintf(&b, " %s %s;", p.Name, c)
		}
	}
	return strings.TrimSuffix(b.String(), ";")
}

// EnsureStreams creates every missing stream with the tunables t and
// checks the required settings of the others, never changing an existing
// stream: an operator's `nats stream edit` survives every restart. It
// returns the plans, whose Tunable differences the caller reports, and a
// *StreamsError when a required setting differs. Safe to run from several
// processes at once.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, t StreamTunables) ([]StreamPlan, error) {
	var plans []StreamPlan
	var bad []StreamPlan
	for _, want := range Streams(t) {
		var p StreamPlan
		err := retryCreate(ctx, func() error {
			var err error
			if p, err = planStream(ctx, js, want); err != nil || !p.Missing {
				return err
			}
			_, err = js.CreateStream(ctx, want)
			if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				// Another process created it first, perhaps with other
				// tunables: compare with what it made.
				if p, err = planStream(ctx, js, want); err == nil && p.Missing {
					err = fmt.Errorf("stream %s: created and gone", want.Name)
				}
				return err
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("stream %s: %w", want.Name, err)
		}
		if len(p.Required) > 0 {
			bad = append(bad, p)
		}
		plans = append(plans, p)
	}
	if len(bad) > 0 {
		return plans, &StreamsError{Plans: bad}
	}
	return plans, nil
}

// ApplyStreams creates the missing streams of plans and updates the
// changed ones to their Want. The server refuses changes it cannot make
// in place (storage, some retention changes): the error names the stream.
func ApplyStreams(ctx context.Context, js jetstream.JetStream, plans []StreamPlan) error {
	for _, p := range plans {
		var err error
		switch {
		case p.Missing:
			_, err = js.CreateStream(ctx, p.Want)
		case p.Changed():
			_, err = js.UpdateStream(ctx, p.Want)
		}
		if err != nil {
			return fmt.Errorf("stream %s: %w", p.Name, err)
		}
	}
	return nil
}

// FormatBytes writes n as the largest binary unit that divides it
// ("512MiB"); -1 or 0 is "unlimited".
func FormatBytes(n int64) string {
	if n <= 0 {
		return "unlimited"
	}
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// ParseBytes reads a size such as 512MiB, 1GiB, 1G, 1GB or 1048576. Every
// unit is binary (1 GB = 1 GiB = 1024³ bytes), as the NATS CLI reads them.
func ParseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	upper := strings.ToUpper(s)
	upper = strings.TrimSuffix(upper, "B")
	upper = strings.TrimSuffix(upper, "I")
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40}} {
		if strings.HasSuffix(upper, u.suffix) {
			mult, upper = u.size, strings.TrimSuffix(upper, u.suffix)
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(upper), 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size such as 512MiB or 2GiB", s)
	}
	return n * mult, nil
}

// FormatAge writes d in days when it is whole days ("7d"), else as Go does.
func FormatAge(d time.Duration) string {
	if d <= 0 {
		return "unlimited"
	}
	if d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}

// ParseAge reads a duration such as 7d, 36h or 90m.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err == nil && n > 0 && n < 100000 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("%q is not an age such as 7d or 36h", s)
}
