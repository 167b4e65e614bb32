-- +goose Up
-- A tool call's stored result (what answers a redelivered request) goes
-- in its audit entry's row, whose id is the call's: two rows of the same
-- key in two tables, each a leaf written at its place in a key by tenant
-- and call, were a twentieth of what a turn wrote on SQLite. The result
-- is set to NULL once it is past what redelivery needs (PruneToolCalls),
-- found through audit_results_age; the entry stays as long as the audit
-- log keeps it. Results stored in tool_calls before are read and pruned
-- there as before.
ALTER TABLE audit_log ADD COLUMN result TEXT;
CREATE INDEX audit_results_age ON audit_log (created_at) WHERE result IS NOT NULL;

-- +goose Down
INSERT INTO tool_calls (tenant_id, call_id, tool, result, created_at)
    SELECT tenant_id, id, tool, result, created_at FROM audit_log WHERE result IS NOT NULL
    ON CONFLICT (tenant_id, call_id) DO NOTHING;
DROP INDEX audit_results_age;
ALTER TABLE audit_log DROP COLUMN result;
