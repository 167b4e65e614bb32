-- +goose Up
-- When the conversation's running turn runs out of time; NULL when no turn runs.
ALTER TABLE conversations ADD COLUMN deadline_at TEXT;
CREATE INDEX conversations_due ON conversations (deadline_at) WHERE deadline_at IS NOT NULL;

-- +goose Down
DROP INDEX conversations_due;
ALTER TABLE conversations DROP COLUMN deadline_at;
