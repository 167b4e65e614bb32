package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// pruneBatch is how many rows one pruning statement deletes: each batch is
// its own short write (on SQLite one turn of the writer between others'
// transactions, on Postgres one statement of a pipeline), so that no
// pruning holds a lock for long however much there is to delete.
const pruneBatch = 1000

// skipLocked ends a pruning statement's choice of rows on Postgres: rows
// another replica's pruning (or a handler) holds are left for the next
// pass instead of waited for, so two replicas pruning at once share the
// work and never deadlock. SQLite has one writer and needs nothing.
func (s *Store) skipLocked() string {
	if s.d.name == dialectPostgres {
		return ` FOR UPDATE SKIP LOCKED`
	}
	return ``
}

// pruneBatches runs one batched delete until it deletes nothing, and
// returns how many rows went. Only rows this store deleted are counted, so
// two replicas pruning the same table count each row once between them.
func (s *Store) pruneBatches(ctx context.Context, what, q string, args ...any) (int64, error) {
	var total int64
	for {
		n, err := s.exec(ctx, q, args...)
		if err != nil {
			return total, fmt.Errorf("prune %s: %w", what, err)
		}
		total += n
		if n < pruneBatch || ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
}

// PruneToolCalls deletes the stored results of tool calls made before
// cutoff and returns how many. A stored result is what makes a
// redelivered ToolRequest answer without running the tool again, so
// cutoff must be older than any copy of a request that can still be
// delivered (see the toolrunner's pruner for the bound).
//
// A result kept in its audit entry (migration 00026) is set to NULL, the
// entry left to the audit log's own retention; one in tool_calls is
// deleted with its row.
func (s *Store) PruneToolCalls(ctx context.Context, cutoff time.Time) (int64, error) {
	inAudit, err := s.pruneBatches(ctx, "tool calls", `UPDATE audit_log SET result = NULL WHERE (tenant_id, id) IN
		(SELECT tenant_id, id FROM audit_log WHERE result IS NOT NULL AND created_at < ? ORDER BY created_at`+
		limitLiteral(pruneBatch)+s.skipLocked()+`)`, s.d.ts(cutoff))
	if err != nil {
		return inAudit, err
	}
	inTable, err := s.pruneBatches(ctx, "tool calls", `DELETE FROM tool_calls WHERE (tenant_id, call_id) IN
		(SELECT tenant_id, call_id FROM tool_calls WHERE created_at < ? ORDER BY created_at`+limitLiteral(pruneBatch)+s.skipLocked()+`)`,
		s.d.ts(cutoff))
	return inAudit + inTable, err
}

// PruneProposals deletes proposals whose expiry was before cutoff,
// whatever became of them, and returns how many. A proposal is decided
// (or let run out) before it expires, so every proposal deleted was
// settled before cutoff; the conversation that made it keeps its own
// record, and a replayed transcript shows a proposal that is gone as
// expired.
func (s *Store) PruneProposals(ctx context.Context, cutoff time.Time) (int64, error) {
	return s.pruneBatches(ctx, "proposals", `DELETE FROM proposals WHERE (tenant_id, id) IN
		(SELECT tenant_id, id FROM proposals WHERE expires_at < ? ORDER BY expires_at`+limitLiteral(pruneBatch)+s.skipLocked()+`)`,
		s.d.ts(cutoff))
}

// PruneFrames deletes the tenant's frames (conversation messages and the
// other frames kept for catch-up) stored before cutoff, except each
// user's newest frame, and returns how many. The newest stays because on
// SQLite a user's next seq is one more than their newest frame's: were
// it deleted, seqs would be given again and a client resuming after its
// last seq would miss the frames that reuse them.
//
// It walks the frames' primary key, user by user: a user's frames are in
// seq order, which is the order they were stored in, so what is older
// than cutoff is the start of each user's frames, up to their first frame
// at or after it. A pass reads one entry per user of the tenant and what
// it deletes, with no index of its own: an index by age was one more page
// written for every frame stored (migration 00018 drops it), where a
// frame is stored several times a turn and pruned once a retention.
func (s *Store) PruneFrames(ctx context.Context, tenantID string, cutoff time.Time) (int64, error) {
	var total int64
	for after := ""; ; {
		// The next user's oldest frame.
		var user string
		var oldest time.Time
		err := s.readRow(ctx, `SELECT user_id, created_at FROM frames WHERE tenant_id = ? AND user_id > ?
			ORDER BY user_id, seq`+limitLiteral(1), []any{tenantID, after}, &user, timeCol{&oldest})
		if errors.Is(err, sql.ErrNoRows) {
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("prune frames: %w", err)
		}
		after = user
		if !oldest.Before(cutoff) {
			continue
		}
		// Up to the user's first frame at or after cutoff (their newest if
		// none is): a frame stored out of its time's order (another
		// replica's clock) waits for the next pass, never goes early.
		n, err := s.pruneBatches(ctx, "frames", `DELETE FROM frames WHERE (tenant_id, user_id, seq) IN
			(SELECT tenant_id, user_id, seq FROM frames WHERE tenant_id = ? AND user_id = ? AND created_at < ?
				AND seq < COALESCE(
					(SELECT y.seq FROM frames y WHERE y.tenant_id = ? AND y.user_id = ? AND y.created_at >= ? ORDER BY y.seq`+limitLiteral(1)+`),
					(SELECT MAX(l.seq) FROM frames l WHERE l.tenant_id = ? AND l.user_id = ?))
				ORDER BY seq`+limitLiteral(pruneBatch)+s.skipLocked()+`)`,
			tenantID, user, s.d.ts(cutoff), tenantID, user, s.d.ts(cutoff), tenantID, user)
		total += n
		if err != nil {
			return total, err
		}
	}
}

// PruneNotifications deletes the tenant's inbox notifications created
// before cutoff, read or not, and returns how many.
func (s *Store) PruneNotifications(ctx context.Context, tenantID string, cutoff time.Time) (int64, error) {
	return s.pruneBatches(ctx, "notifications", `DELETE FROM notifications WHERE (tenant_id, id) IN
		(SELECT tenant_id, id FROM notifications WHERE tenant_id = ? AND created_at < ?`+limitLiteral(pruneBatch)+s.skipLocked()+`)`,
		tenantID, s.d.ts(cutoff))
}

// PruneDocuments deletes the tenant's documents created before cutoff,
// with their files, except those still waiting to be imported, and
// returns how many. What was imported from them stays in the ledger.
func (s *Store) PruneDocuments(ctx context.Context, tenantID string, cutoff time.Time) (int64, error) {
	return s.pruneBatches(ctx, "documents", `DELETE FROM documents WHERE (tenant_id, id) IN
		(SELECT tenant_id, id FROM documents WHERE tenant_id = ? AND created_at < ? AND status <> ?`+limitLiteral(pruneBatch)+s.skipLocked()+`)`,
		tenantID, s.d.ts(cutoff), DocumentQueued)
}

// PruneAudit deletes the tenant's audit entries made before cutoff and
// returns how many.
func (s *Store) PruneAudit(ctx context.Context, tenantID string, cutoff time.Time) (int64, error) {
	return s.pruneBatches(ctx, "audit log", `DELETE FROM audit_log WHERE (tenant_id, id) IN
		(SELECT tenant_id, id FROM audit_log WHERE tenant_id = ? AND created_at < ? ORDER BY created_at`+limitLiteral(pruneBatch)+s.skipLocked()+`)`,
		tenantID, s.d.ts(cutoff))
}

// Tenants returns the tenants that have rows in table, one of frames,
// notifications, documents and audit_log, in order. It reads one index
// entry per tenant (each step asks for the next tenant after the last),
// not the table.
func (s *Store) Tenants(ctx context.Context, table string) ([]string, error) {
	switch table {
	case "frames", "notifications", "documents", "audit_log":
	default:
		return nil, fmt.Errorf("tenants of %q: not a table kept per tenant", table)
	}
	var out []string
	err := s.readRows(ctx, `SELECT id FROM (WITH RECURSIVE t(id) AS (
			SELECT MIN(tenant_id) FROM `+table+`
			UNION ALL
			SELECT (SELECT MIN(tenant_id) FROM `+table+` WHERE tenant_id > t.id) FROM t WHERE t.id IS NOT NULL)
		SELECT id FROM t) AS tenants WHERE id IS NOT NULL ORDER BY id`, nil, func(rows rowScanner) error {
		out = out[:0]
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			out = append(out, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tenants of %s: %w", table, err)
	}
	return out, nil
}
