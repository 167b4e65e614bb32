-- +goose Up
-- A proposal a newer one replaced is "superseded", not "expired": the
-- person moved on, nobody let it run out.
ALTER TABLE proposals DROP CONSTRAINT proposals_status_check;
ALTER TABLE proposals ADD CONSTRAINT proposals_status_check
    CHECK (status IN ('pending', 'approved', 'rejected', 'executed', 'expired', 'superseded'));

-- The language a person wants answers in ("en", "fr"; empty: not set).
ALTER TABLE user_settings ADD COLUMN language TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE user_settings DROP COLUMN language;
UPDATE proposals SET status = 'expired' WHERE status = 'superseded';
ALTER TABLE proposals DROP CONSTRAINT proposals_status_check;
ALTER TABLE proposals ADD CONSTRAINT proposals_status_check
    CHECK (status IN ('pending', 'approved', 'rejected', 'executed', 'expired'));
