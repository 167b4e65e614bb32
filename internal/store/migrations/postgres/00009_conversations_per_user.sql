-- +goose Up
-- A conversation is its user's own: keyed by tenant, user and the id the
-- client chose, so that two people of a tenant may use the same id without
-- meeting, and no one can take another's id first. Every row already names
-- the user who owns it (the one who wrote first), and keeps it.
ALTER TABLE conversations DROP CONSTRAINT conversations_pkey;
ALTER TABLE conversations ADD PRIMARY KEY (tenant_id, user_id, conversation_id);

-- +goose Down
-- Fails when two users of a tenant have a conversation of the same id:
-- tenant-wide ids cannot name both.
ALTER TABLE conversations DROP CONSTRAINT conversations_pkey;
ALTER TABLE conversations ADD PRIMARY KEY (tenant_id, conversation_id);
