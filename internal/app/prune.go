package app

import (
	"context"
	"fmt"
	"time"

	"github.com/purser-ai/purser/internal/bus"
	"github.com/purser-ai/purser/internal/config"
	"github.com/purser-ai/purser/internal/outbox"
	"github.com/purser-ai/purser/internal/prune"
)

// keyWindows are the ages below which the keys that make a redelivery
// harmless must be kept.
//
// A message can reach a handler only while a copy of it is in its stream,
// that is within its stream's max age of that copy's publication. Copies
// come from the outbox: the row itself (kept while unpublished, and
// Retention after), or the same row stored again when the transition that
// made it is applied again, which only a redelivery of its input can
// cause, within the input stream's max age of the input's publication.
// The key a message leaves (a stored tool result, a frame's event id) is
// written at its first delivery, after its input was published. So the
// last copy that can still arrive comes at most
// maxAge(input stream) + maxAge(message's stream) after the key was
// written:
//
//   - tool results and proposals: the input is a turn or a tool result
//     (TURNS, TOOLS), the message a ToolRequest (TOOLS);
//   - frames and notifications: the input is a turn or a tool result or an
//     import job (TURNS, TOOLS), the message an agent event or a
//     notification (AGENT, NOTIFY).
//
// An outbox row republished after a database outage longer than these
// windows is the one case they do not cover.
func keyWindows(t bus.StreamTunables) (toolKeys, frameKeys time.Duration) {
	age := map[string]time.Duration{}
	for _, s := range bus.Streams(t) {
		age[s.Name] = s.MaxAge
	}
	input := max(age[bus.StreamTurns], age[bus.StreamTools])
	return input + age[bus.StreamTools], input + max(age[bus.StreamAgent], age[bus.StreamNotify])
}

// pruner is the background loop that prunes what mode's service owns:
//
//   - orchestrator: published outbox messages, proposals;
//   - toolrunner: stored tool results, and documents and the audit log
//     past their retention (never younger than the tool keys' window: an
//     import job or a tool call redelivered finds what it made);
//   - notifier: frames and notifications past the message retention.
//
// The ingress owns no table.
func pruner(mode config.Mode, d deps, relay *outbox.Relay) (func(context.Context), error) {
	tun, err := d.cfg.StreamTunables()
	if err != nil {
		return nil, err
	}
	keep, err := d.cfg.RetentionPolicy()
	if err != nil {
		return nil, err
	}
	toolKeys, frameKeys := keyWindows(tun)
	st := d.store
	older := func(f func(context.Context, time.Time) (int64, error), age time.Duration) func(context.Context, time.Time) (int64, error) {
		return func(ctx context.Context, now time.Time) (int64, error) { return f(ctx, now.Add(-age)) }
	}
	tenantsOf := func(table string) func(context.Context) ([]string, error) {
		return func(ctx context.Context) ([]string, error) { return st.Tenants(ctx, table) }
	}
	var jobs []prune.Job
	switch mode {
	case config.ModeOrchestrator:
		jobs = []prune.Job{
			{Table: "outbox", Prune: relay.Prune},
			{Table: "proposals", Prune: older(st.PruneProposals, toolKeys)},
		}
	case config.ModeToolrunner:
		jobs = []prune.Job{
			{Table: "tool_calls", Prune: older(st.PruneToolCalls, toolKeys)},
			prune.PerTenant("documents", prune.Documents, keep, toolKeys, tenantsOf("documents"), st.PruneDocuments),
			prune.PerTenant("audit_log", prune.Audit, keep, toolKeys, tenantsOf("audit_log"), st.PruneAudit),
		}
	case config.ModeNotifier:
		jobs = []prune.Job{
			prune.PerTenant("frames", prune.Messages, keep, frameKeys, tenantsOf("frames"), st.PruneFrames),
			prune.PerTenant("notifications", prune.Messages, keep, frameKeys, tenantsOf("notifications"), st.PruneNotifications),
		}
	default:
		return nil, fmt.Errorf("no pruner for %s", mode)
	}
	if mode == config.ModeNotifier && keep.Any(prune.Messages) {
		d.log.Info("message retention", "retention", keep.String(), "kept_at_least", frameKeys.String())
	}
	p := prune.New(d.cfg.PruneInterval, d.pruneMetrics, d.log.With("service", string(mode)), d.now, jobs...)
	return p.Run, nil
}
