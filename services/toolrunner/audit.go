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

// audit writes the entry of a call whose result is not stored (refused
// before it ran); a stored result is written with its entry (remember).
func (r *Runner) audit(ctx context.Context, req contracts.ToolRequest, args any, res contracts.ToolResult) error {
	if err := r.store.AppendAudit(ctx, r.auditEntry(req, args, res)); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// auditEntry is the call's one entry in the audit log, keyed by its call
// id: what ran, for whom, with what args (secrets redacted), how it ended
// and how long it took.
func (r *Runner) auditEntry(req contracts.ToolRequest, args any, res contracts.ToolResult) store.AuditEntry {
	return store.AuditEntry{ID: req.CallID, TenantID: req.TenantID, UserID: req.UserID, Tool: req.Tool,
		CallID: req.CallID, Outcome: outcomeOf(res), Args: redact(args), DurationMS: res.Meta.DurationMS, CreatedAt: r.now()}
}

// outcomeOf is "ok" or the result's error code.
func outcomeOf(res contracts.ToolResult) string {
	if !res.OK && res.Error != nil {
		return res.Error.Code
	}
	return "ok"
}
