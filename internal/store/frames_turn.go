package store

import (
	"context"
	"fmt"
)

// TurnFrameSeqs are the seqs of the frames of one of the user's turns:
// its message, the steps and the answer. A search during the turn leaves
// them out, so that "find my Tesco payments" never finds itself.
func (s *Store) TurnFrameSeqs(ctx context.Context, tenantID, userID, turnID string) ([]int64, error) {
	if turnID == "" {
		return nil, nil
	}
	rows, err := s.query(ctx, turnFrameSeqsSQL,
		tenantID, userID, turnID)
	if err != nil {
		return nil, fmt.Errorf("turn frames: %w", err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			return nil, err
		}
		out = append(out, seq)
	}
	return out, rows.Err()
}

// turnFrameSeqsSQL reads the seqs of a turn's frames; as in
// framesOfTurnSQL, the + keeps the lookup on frames_turn_event.
const turnFrameSeqsSQL = `SELECT seq FROM frames WHERE tenant_id = ? AND user_id = ? AND turn_id = ? ORDER BY +seq LIMIT 1000`
