-- +goose Up
-- The message retention walks each user's frames in seq order (their
-- primary key) instead of an index by age: that index was one more page
-- written for every frame stored, several a turn, for a pass run once a
-- retention. See PruneFrames.
DROP INDEX frames_age;

-- +goose Down
CREATE INDEX frames_age ON frames (tenant_id, created_at);
