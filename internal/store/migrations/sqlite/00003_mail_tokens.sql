-- +goose Up
-- Per-user mail OAuth tokens, sealed (AES-256-GCM) with a key from configuration.
CREATE TABLE mail_tokens (
    tenant_id  TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    sealed     BLOB NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);

-- +goose Down
DROP TABLE mail_tokens;
