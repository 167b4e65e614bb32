package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// On SQLite a conversation's messages reach the search index by a mark
// instead of the queue (migration 00024): frames are only appended, so
// those past search_marks' 'frames', in rowid order, are the ones not
// indexed yet. A frame deleted is still queued, as on Postgres, whose
// trigger queues every message.

// framesMark is search_marks' entry for the frames indexed.
const framesMark = "frames"

// userFramesPastMarkSQL selects a person's frames past the mark (tenant,
// user, tenant, user in): those above their newest frame at or below it,
// found by walking the user's frames back from the newest, as seq and
// rowid grow together for a user.
const userFramesPastMarkSQL = `FROM frames WHERE tenant_id = ? AND user_id = ? AND seq > COALESCE(
	(SELECT seq FROM frames WHERE tenant_id = ? AND user_id = ?
		AND rowid <= (SELECT value FROM search_marks WHERE name = 'frames') ORDER BY seq DESC LIMIT 1), 0)`

// messagesPastMark says whether the person has frames of a conversation
// the mark has not passed (SQLite only). SQL cannot tell a message from a
// proposal in a packed payload, so a proposal past the mark makes a search
// run the person's part of the indexer, which finds nothing to index.
func (s *Store) messagesPastMark(ctx context.Context, tenantID, userID string) (bool, error) {
	var one int
	err := s.readRow(ctx, `SELECT 1 `+userFramesPastMarkSQL+` AND conversation_id <> '' LIMIT 1`,
		[]any{tenantID, userID, tenantID, userID}, &one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// newMessages reads up to limit frames past the mark and returns the
// index rows of the messages among them, and how many frames it read.
// For everyone (tenantID ""), it moves the mark past what it read; for one
// person, it leaves the mark, and the indexer's pass later writes the same
// rows again, which changes nothing (upsertSearchDocs).
func (s *Store) newMessages(ctx context.Context, tenantID, userID string, limit int) ([]searchDoc, int, error) {
	q := `SELECT rowid, tenant_id, user_id, seq, conversation_id, payload, created_at FROM frames
		WHERE rowid > (SELECT value FROM search_marks WHERE name = 'frames') ORDER BY rowid LIMIT ?`
	args := []any{limit}
	if tenantID != "" {
		q = `SELECT rowid, tenant_id, user_id, seq, conversation_id, payload, created_at ` + userFramesPastMarkSQL +
			` ORDER BY seq LIMIT ?`
		args = []any{tenantID, userID, tenantID, userID, limit}
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var docs []searchDoc
	var last int64
	read := 0
	for rows.Next() {
		var seq int64
		var conv string
		var payload []byte
		var created time.Time
		doc := searchDoc{kind: SearchMessage}
		if err := rows.Scan(&last, &doc.tenantID, &doc.userID, &seq, &conv, framePacker.col(&payload), timeCol{&created}); err != nil {
			return nil, 0, err
		}
		read++
		doc.ref = formatSeq(seq)
		if messageDoc(&doc, conv, payload, created) {
			docs = append(docs, doc)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	rows.Close()
	if tenantID == "" && read > 0 {
		if _, err := s.exec(ctx, `UPDATE search_marks SET value = ? WHERE name = ?`, last, framesMark); err != nil {
			return nil, 0, err
		}
	}
	return docs, read, nil
}

// appendFresh adds to docs the messages read past the mark that the
// queue's rows did not already give (a reindex queues messages too).
func appendFresh(docs, fresh []searchDoc) []searchDoc {
	if len(fresh) == 0 {
		return docs
	}
	type key struct{ tenantID, userID, kind, ref string }
	seen := make(map[key]bool, len(docs))
	for _, d := range docs {
		seen[key{d.tenantID, d.userID, d.kind, d.ref}] = true
	}
	for _, d := range fresh {
		if !seen[key{d.tenantID, d.userID, d.kind, d.ref}] {
			docs = append(docs, d)
		}
	}
	return docs
}
