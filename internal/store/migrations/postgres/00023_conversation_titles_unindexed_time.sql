-- +goose Up
-- A user's conversations are listed by the time each was last written
-- in, which every turn moves: indexed, each turn deleted the entry and
-- wrote it again at its new place, one more page of the log a turn for a
-- list read when a person opens the app. Without the index the turn
-- rewrites the row alone, and the list sorts the user's rows, which are
-- found by the primary key's prefix (tens of rows for most people, a few
-- thousand for the busiest).
DROP INDEX conversation_titles_recent;

-- +goose Down
CREATE INDEX conversation_titles_recent ON conversation_titles (tenant_id, user_id, updated_at);
