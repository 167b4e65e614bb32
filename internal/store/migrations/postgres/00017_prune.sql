-- +goose Up
-- Indexes the pruner walks from the oldest row, so that a pass reads
-- only what it deletes: tool results kept for exactly-once by age,
-- proposals by expiry, and a tenant's frames by age (the message
-- retention). Documents, notifications and the audit log are found
-- through indexes they already have.
CREATE INDEX tool_calls_age ON tool_calls (created_at);
CREATE INDEX proposals_expiry ON proposals (expires_at);
CREATE INDEX frames_age ON frames (tenant_id, created_at);

-- A frame removed by the retention leaves the search index too
-- (purser_search_queue reads OLD on a delete and skips frames that are
-- not a conversation's).
CREATE TRIGGER search_frame_del AFTER DELETE ON frames
    FOR EACH ROW EXECUTE FUNCTION purser_search_queue();

-- +goose Down
DROP TRIGGER search_frame_del ON frames;
DROP INDEX frames_age;
DROP INDEX proposals_expiry;
DROP INDEX tool_calls_age;
