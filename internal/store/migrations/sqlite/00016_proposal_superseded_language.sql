-- +goose Up
-- A proposal a newer one replaced is "superseded", not "expired": the
-- person moved on, nobody let it run out. SQLite changes a CHECK only by
-- rebuilding the table.
CREATE TABLE proposals_next (
    tenant_id       TEXT        NOT NULL,
    id              TEXT        NOT NULL,
    user_id         TEXT        NOT NULL,
    conversation_id TEXT        NOT NULL,
    turn_id         TEXT        NOT NULL,
    tool            TEXT        NOT NULL,
    args            TEXT,
    summary         TEXT        NOT NULL,
    status          TEXT        NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'executed', 'expired', 'superseded')),
    revision        INTEGER     NOT NULL,
    expires_at      TEXT        NOT NULL,
    created_at      TEXT        NOT NULL,
    decided_at      TEXT       ,
    PRIMARY KEY (tenant_id, id)
);
INSERT INTO proposals_next SELECT tenant_id, id, user_id, conversation_id, turn_id, tool, args, summary,
    status, revision, expires_at, created_at, decided_at FROM proposals;
DROP TABLE proposals;
ALTER TABLE proposals_next RENAME TO proposals;

-- The language a person wants answers in ("en", "fr"; empty: not set).
ALTER TABLE user_settings ADD COLUMN language TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE user_settings DROP COLUMN language;
CREATE TABLE proposals_prev (
    tenant_id       TEXT        NOT NULL,
    id              TEXT        NOT NULL,
    user_id         TEXT        NOT NULL,
    conversation_id TEXT        NOT NULL,
    turn_id         TEXT        NOT NULL,
    tool            TEXT        NOT NULL,
    args            TEXT,
    summary         TEXT        NOT NULL,
    status          TEXT        NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'executed', 'expired')),
    revision        INTEGER     NOT NULL,
    expires_at      TEXT        NOT NULL,
    created_at      TEXT        NOT NULL,
    decided_at      TEXT       ,
    PRIMARY KEY (tenant_id, id)
);
INSERT INTO proposals_prev SELECT tenant_id, id, user_id, conversation_id, turn_id, tool, args, summary,
    CASE status WHEN 'superseded' THEN 'expired' ELSE status END, revision, expires_at, created_at, decided_at FROM proposals;
DROP TABLE proposals;
ALTER TABLE proposals_prev RENAME TO proposals;
