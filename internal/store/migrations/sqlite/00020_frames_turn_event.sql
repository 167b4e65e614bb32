-- +goose Up
-- One index finds a turn's frames and keeps a redelivered event from
-- being stored twice, where two did: every frame stored wrote a page of
-- each, at its user's place, several frames a turn. A frame's turn comes
-- from its payload, so a redelivery has the same turn and event as the
-- frame first stored; a frame of no turn has '' and keeps the uniqueness
-- of its event among the user's others. A turn holds a few frames, so
-- ordering them by seq after the lookup costs nothing.
CREATE UNIQUE INDEX frames_turn_event ON frames (tenant_id, user_id, turn_id, event_id);
DROP INDEX frames_event;
DROP INDEX frames_turn;

-- +goose Down
CREATE INDEX frames_turn ON frames (tenant_id, user_id, turn_id, seq) WHERE turn_id <> '';
CREATE UNIQUE INDEX frames_event ON frames (tenant_id, user_id, event_id);
DROP INDEX frames_turn_event;
