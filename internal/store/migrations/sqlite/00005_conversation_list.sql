-- +goose Up
-- The conversation a frame belongs to, so a conversation's history can be
-- paged, and each user's conversations with a title (their first words).
ALTER TABLE frames ADD COLUMN conversation_id TEXT NOT NULL DEFAULT '';
CREATE INDEX frames_conversation ON frames (tenant_id, user_id, conversation_id, seq);
CREATE TABLE conversation_titles (
    tenant_id       TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    title           TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, conversation_id)
);
CREATE INDEX conversation_titles_recent ON conversation_titles (tenant_id, user_id, updated_at);

-- +goose Down
DROP TABLE conversation_titles;
DROP INDEX frames_conversation;
ALTER TABLE frames DROP COLUMN conversation_id;
