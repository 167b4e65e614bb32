-- +goose Up
-- The e-mail domain a document came from, so that an import proposal can
-- warn when a user has never imported from that sender before.
ALTER TABLE documents ADD COLUMN sender_domain TEXT NOT NULL DEFAULT '';
CREATE INDEX documents_sender ON documents (tenant_id, user_id, sender_domain);

-- +goose Down
DROP INDEX documents_sender;
ALTER TABLE documents DROP COLUMN sender_domain;
