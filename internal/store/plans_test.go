package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestHotReadsPlans checks that SQLite answers the reads a turn or the
// relay makes most through the index meant for them. Without statistics
// SQLite prefers an order it can read off an index to a sort, and took
// the relay's pending read as a walk of the whole outbox, published rows
// and all, and a turn's frames as a walk of all of its user's frames:
// the answers are the same, only slower as the tables grow.
func TestHotReadsPlans(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "plans.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct {
		name, query, want string
		args              []any
	}{
		{"pending outbox", pendingOutboxSQL + " LIMIT 100", "USING INDEX outbox_pending", nil},
		{"frames of a turn", framesOfTurnSQL + " LIMIT 50", "USING INDEX frames_turn_event", []any{"t", "u", "turn"}},
		{"seqs of a turn", turnFrameSeqsSQL, "USING INDEX frames_turn_event", []any{"t", "u", "turn"}},
		{"a page of a conversation", conversationFramesSQL + " LIMIT 50",
			"USING INDEX sqlite_autoindex_frames_1 (tenant_id=? AND user_id=? AND seq<?)", []any{"t", "u", 1 << 62, "c"}},
		{"a user's conversations", listConversationsSQL + " LIMIT 50",
			"USING INDEX sqlite_autoindex_conversation_titles_1 (tenant_id=? AND user_id=?)", []any{"t", "u"}},
	} {
		rows, err := s.rdb.QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if got := strings.Join(plan, "; "); !strings.Contains(got, c.want) {
			t.Errorf("%s: plan %q, want it %s", c.name, got, c.want)
		}
	}
}
