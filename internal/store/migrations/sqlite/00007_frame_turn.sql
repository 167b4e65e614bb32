-- +goose Up
-- A turn's frames are found by an index instead of by reading the user's
-- latest thousand frames: a resent turn or decision is answered with them.
ALTER TABLE frames ADD COLUMN turn_id TEXT NOT NULL DEFAULT '';
UPDATE frames SET turn_id = COALESCE(json_extract(CAST(payload AS TEXT), '$.turn_id'), '')
    WHERE json_valid(CAST(payload AS TEXT)) AND json_type(CAST(payload AS TEXT)) = 'object';
CREATE INDEX frames_turn ON frames (tenant_id, user_id, turn_id, seq) WHERE turn_id <> '';

-- +goose Down
DROP INDEX frames_turn;
ALTER TABLE frames DROP COLUMN turn_id;
