package store

import (
	"context"
	"testing"
)

// The toolrunner's call (its audit entry takes the call's id) writes one
// row: the entry with its result, and nothing in tool_calls.
func TestAToolRunnersCallWritesOneRow(t *testing.T) {
	ctx := context.Background()
	st := openSQLiteForTest(t)
	if _, created, err := st.PutToolCall(ctx, ToolCall{TenantID: "t1", CallID: "c1", Tool: "add_expense", Result: []byte(`{"ok":true}`)},
		AuditEntry{TenantID: "t1", ID: "c1", UserID: "ann", Tool: "add_expense", CallID: "c1", Outcome: "ok"}); err != nil || !created {
		t.Fatalf("put: created %v, %v", created, err)
	}
	var inTable, withResult int
	if err := st.queryRow(ctx, `SELECT (SELECT COUNT(*) FROM tool_calls), (SELECT COUNT(*) FROM audit_log WHERE result IS NOT NULL)`).Scan(&inTable, &withResult); err != nil {
		t.Fatal(err)
	}
	if inTable != 0 || withResult != 1 {
		t.Errorf("rows in tool_calls %d, audit entries with a result %d; want 0 and 1", inTable, withResult)
	}
}
