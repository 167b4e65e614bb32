-- +goose Up
-- A turn's frames are found by an index instead of by reading the user's
-- latest thousand frames: a resent turn or decision is answered with them.
-- A frame's own turn_id is its payload's first one (purser ids hold no
-- quotes).
ALTER TABLE frames ADD COLUMN turn_id TEXT NOT NULL DEFAULT '';
UPDATE frames SET turn_id = substring(convert_from(payload, 'UTF8') from '"turn_id":"([^"]*)"')
    WHERE position('"turn_id":"' in convert_from(payload, 'UTF8')) > 0;
CREATE INDEX frames_turn ON frames (tenant_id, user_id, turn_id, seq) WHERE turn_id <> '';

-- +goose Down
DROP INDEX frames_turn;
ALTER TABLE frames DROP COLUMN turn_id;
