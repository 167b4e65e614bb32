-- +goose Up
-- A conversation's messages reach the search index by a mark instead of
-- the queue. Frames are only ever appended (their rowids grow, and
-- PruneFrames keeps each user's newest, so none is given twice), so the
-- indexer reads those past search_marks' 'frames' in rowid order, a
-- range at the table's end. Queued, every message wrote a queue row and
-- an entry of its key at the user's place, and took both off again: four
-- page writes a message. A frame deleted is still queued (search_frame_del).
DROP TRIGGER search_frame_ins;
CREATE TABLE search_marks (
    name  TEXT    PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO search_marks (name, value) SELECT 'frames', COALESCE(MAX(rowid), 0) FROM frames;

-- +goose Down
INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref)
    SELECT tenant_id, user_id, 'message', CAST(seq AS TEXT) FROM frames
    WHERE rowid > (SELECT value FROM search_marks WHERE name = 'frames') AND conversation_id <> ''
    AND CAST(substr(payload, 1, 14) AS TEXT) <> '{"type":"tool_'
    AND CAST(substr(payload, 1, 18) AS TEXT) <> '{"type":"proposal"' ORDER BY rowid;
DROP TABLE search_marks;
-- +goose StatementBegin
CREATE TRIGGER search_frame_ins AFTER INSERT ON frames WHEN new.conversation_id <> ''
    AND CAST(substr(new.payload, 1, 14) AS TEXT) <> '{"type":"tool_'
    AND CAST(substr(new.payload, 1, 18) AS TEXT) <> '{"type":"proposal"' BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'message', CAST(new.seq AS TEXT));
END;
-- +goose StatementEnd
