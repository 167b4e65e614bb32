-- +goose Up
-- A conversation is its user's own: keyed by tenant, user and the id the
-- client chose, so that two people of a tenant may use the same id without
-- meeting, and no one can take another's id first. Every row already names
-- the user who owns it (the one who wrote first), and keeps it.
CREATE TABLE conversations_per_user (
    tenant_id       TEXT        NOT NULL,
    conversation_id TEXT        NOT NULL,
    user_id         TEXT        NOT NULL,
    version         INTEGER     NOT NULL,
    state           TEXT,
    updated_at      TEXT        NOT NULL,
    deadline_at     TEXT,
    PRIMARY KEY (tenant_id, user_id, conversation_id)
);
INSERT INTO conversations_per_user (tenant_id, conversation_id, user_id, version, state, updated_at, deadline_at)
    SELECT tenant_id, conversation_id, user_id, version, state, updated_at, deadline_at FROM conversations;
DROP TABLE conversations;
ALTER TABLE conversations_per_user RENAME TO conversations;
CREATE INDEX conversations_due ON conversations (deadline_at) WHERE deadline_at IS NOT NULL;

-- +goose Down
-- Fails when two users of a tenant have a conversation of the same id:
-- tenant-wide ids cannot name both.
CREATE TABLE conversations_per_tenant (
    tenant_id       TEXT        NOT NULL,
    conversation_id TEXT        NOT NULL,
    user_id         TEXT        NOT NULL,
    version         INTEGER     NOT NULL,
    state           TEXT,
    updated_at      TEXT        NOT NULL,
    deadline_at     TEXT,
    PRIMARY KEY (tenant_id, conversation_id)
);
INSERT INTO conversations_per_tenant (tenant_id, conversation_id, user_id, version, state, updated_at, deadline_at)
    SELECT tenant_id, conversation_id, user_id, version, state, updated_at, deadline_at FROM conversations;
DROP TABLE conversations;
ALTER TABLE conversations_per_tenant RENAME TO conversations;
CREATE INDEX conversations_due ON conversations (deadline_at) WHERE deadline_at IS NOT NULL;
