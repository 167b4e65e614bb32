package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// AuditEntry records one tool call: who, what (arguments with secrets
// already redacted by the caller), the outcome and how long it took.
type AuditEntry struct {
	TenantID   string
	ID         string
	UserID     string
	Tool       string
	CallID     string
	Outcome    string
	Args       json.RawMessage
	DurationMS int64
	CreatedAt  time.Time
}

// ToolCall is the stored result of a finished tool call, so a redelivered
// request is answered without running again.
type ToolCall struct {
	CallID    string
	TenantID  string
	Tool      string
	Result    json.RawMessage
	CreatedAt time.Time
}

// AppendAudit stores e; the same id again is a no-op.
func (s *Store) AppendAudit(ctx context.Context, e AuditEntry) error {
	_, err := s.exec(ctx, insertAudit, s.auditArgs(e)...)
	if err != nil {
		return fmt.Errorf("append audit: %w", err)
	}
	return nil
}

// ListAudit returns the tenant's audit entries, newest first.
func (s *Store) ListAudit(ctx context.Context, tenantID string, limit int) ([]AuditEntry, error) {
	return s.listAudit(ctx, tenantID, `WHERE tenant_id = ?`, []any{tenantID}, limit)
}

// ListUserAudit returns the entries of the tenant's audit log that are
// userID's own calls, newest first.
func (s *Store) ListUserAudit(ctx context.Context, tenantID, userID string, limit int) ([]AuditEntry, error) {
	return s.listAudit(ctx, tenantID, `WHERE tenant_id = ? AND user_id = ?`, []any{tenantID, userID}, limit)
}

// listAudit reads the tenant's entries that where selects, newest first.
func (s *Store) listAudit(ctx context.Context, tenantID, where string, args []any, limit int) ([]AuditEntry, error) {
	rows, err := s.query(ctx, `SELECT id, user_id, tool, call_id, outcome, args, duration_ms, created_at FROM audit_log
		`+where+` ORDER BY created_at DESC, id DESC`+limitClause(limit), args...)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	defer rows.Close()
	var out []AuditEntry
	for rows.Next() {
		e := AuditEntry{TenantID: tenantID}
		if err := rows.Scan(&e.ID, &e.UserID, &e.Tool, &e.CallID, &e.Outcome, jsonCol{&e.Args}, &e.DurationMS, timeCol{&e.CreatedAt}); err != nil {
			return nil, fmt.Errorf("list audit: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// GetToolCall returns the stored result of the tenant's call, or ErrNotFound:
// in its audit entry (migration 00026), or in tool_calls, where results
// were stored before and are stored for an entry whose id is not the
// call's.
func (s *Store) GetToolCall(ctx context.Context, tenantID, callID string) (ToolCall, error) {
	c := ToolCall{TenantID: tenantID, CallID: callID}
	err := s.readRow(ctx, `SELECT tool, result, created_at FROM audit_log WHERE tenant_id = ? AND id = ? AND result IS NOT NULL
		UNION ALL SELECT tool, result, created_at FROM tool_calls WHERE tenant_id = ? AND call_id = ? LIMIT 1`,
		[]any{tenantID, callID, tenantID, callID}, &c.Tool, jsonCol{&c.Result}, timeCol{&c.CreatedAt})
	if err != nil {
		return ToolCall{}, fmt.Errorf("get tool call: %w", notFound(err))
	}
	return c, nil
}

// PutToolCall stores c's result unless the call id is already done, and
// e, the call's audit entry, unless its id is already in the log, in one
// commit: the result a call is answered with is never stored without its
// audit entry. It returns what is stored and whether this call stored it.
func (s *Store) PutToolCall(ctx context.Context, c ToolCall, e AuditEntry) (ToolCall, bool, error) {
	c.CreatedAt = s.orNow(c.CreatedAt)
	call := []any{c.TenantID, c.CallID, c.Tool, jsonArg(c.Result), s.d.ts(c.CreatedAt)}
	audit := s.auditArgs(e)
	var n int64
	var err error
	switch {
	case e.ID == c.CallID && e.TenantID == c.TenantID && e.Tool == c.Tool:
		// The toolrunner's case: the result goes in the entry's row, one
		// statement on either engine.
		n, err = s.exec(ctx, insertAuditWithResult, append(audit, jsonArg(c.Result))...)
	case s.d.name == dialectPostgres:
		// One statement, one round trip, in a transaction or not: a
		// data-modifying WITH.
		n, err = s.exec(ctx, `WITH a AS (`+insertAudit+`) `+insertToolCall, append(audit, call...)...)
	default:
		err = s.InTx(ctx, func(tx *Store) error {
			if _, err := tx.exec(ctx, insertAudit, audit...); err != nil {
				return err
			}
			n, err = tx.exec(ctx, insertToolCall, call...)
			return err
		})
	}
	if err != nil {
		return ToolCall{}, false, fmt.Errorf("put tool call: %w", err)
	}
	if n == 1 {
		return c, true, nil
	}
	stored, err := s.GetToolCall(ctx, c.TenantID, c.CallID)
	return stored, false, err
}

// auditArgs are insertAudit's parameters for e.
func (s *Store) auditArgs(e AuditEntry) []any {
	return []any{e.TenantID, e.ID, e.UserID, e.Tool, e.CallID, e.Outcome, jsonArg(e.Args), e.DurationMS, s.d.ts(s.orNow(e.CreatedAt))}
}

// insertAudit and insertToolCall keep what is there: a call's audit entry
// and result are written once.
const (
	insertAudit = `INSERT INTO audit_log (tenant_id, id, user_id, tool, call_id, outcome, args, duration_ms, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, id) DO NOTHING`
	insertToolCall = `INSERT INTO tool_calls (tenant_id, call_id, tool, result, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (tenant_id, call_id) DO NOTHING`
	// insertAuditWithResult stores a call's entry with its result, or the
	// result in an entry of the call's id stored without one (by
	// AppendAudit), unless a result is stored already, there or in
	// tool_calls (before migration 00026): a row is written only when
	// this call stores the result.
	insertAuditWithResult = `INSERT INTO audit_log (tenant_id, id, user_id, tool, call_id, outcome, args, duration_ms, created_at, result)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, id) DO UPDATE SET result = excluded.result
		WHERE audit_log.result IS NULL
			AND NOT EXISTS (SELECT 1 FROM tool_calls t WHERE t.tenant_id = excluded.tenant_id AND t.call_id = excluded.id)`
)
