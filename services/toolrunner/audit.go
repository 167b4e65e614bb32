package toolrunner

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/purser-ai/purser/internal/store"
	"github.com/purser-ai/purser/pkg/contracts"
)

// secretish names argument fields whose values never reach the audit log.
var secretish = []string{"token", "password", "secret", "key", "authorization", "cookie"}

// redact encodes args with the values of secret-looking fields replaced.
func redact(args any) json.RawMessage {
	if args == nil {
		return json.RawMessage(`{}`)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return raw
	}
	for k := range fields {
		lk := strings.ToLower(k)
		for _, s := range secretish {
			if strings.Contains(lk, s) {
				fields[k] = json.RawMessage(`"[redacted]"`)
			}
		}
	}
	out, _ := json.Marshal(fields)
	return out
}

// audit writes one entry per executed call, idempotent by call id.
func (r *Runner) audit(ctx context.Context, req contracts.ToolRequest, args any, outcome string, ms int64) error {
	err := r.store.AppendAudit(ctx, store.AuditEntry{ID: req.CallID, TenantID: req.TenantID, UserID: req.UserID, Tool: req.Tool,
		CallID: req.CallID, Outcome: outcome, Args: redact(args), DurationMS: ms, CreatedAt: r.now()})
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	r.metrics.audits.Inc()
	return nil
}
