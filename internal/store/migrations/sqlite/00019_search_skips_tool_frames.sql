-- +goose Up
-- A conversation's tool progress and proposal frames are never messages
-- (FrameMessage): they are no longer queued for the search indexer, which
-- read each one only to drop it. More than half of a turn's frames are
-- such frames. A frame's payload begins with its type (contracts.ServerFrame).
DROP TRIGGER search_frame_ins;
-- +goose StatementBegin
CREATE TRIGGER search_frame_ins AFTER INSERT ON frames WHEN new.conversation_id <> ''
    AND CAST(substr(new.payload, 1, 14) AS TEXT) <> '{"type":"tool_'
    AND CAST(substr(new.payload, 1, 18) AS TEXT) <> '{"type":"proposal"' BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'message', CAST(new.seq AS TEXT));
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER search_frame_ins;
-- +goose StatementBegin
CREATE TRIGGER search_frame_ins AFTER INSERT ON frames WHEN new.conversation_id <> '' BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'message', CAST(new.seq AS TEXT));
END;
-- +goose StatementEnd
