-- +goose Up
-- A conversation's tool progress and proposal frames are never messages
-- (FrameMessage): they are no longer queued for the search indexer, which
-- read each one only to drop it. More than half of a turn's frames are
-- such frames. A frame's payload begins with its type (contracts.ServerFrame).
DROP TRIGGER search_frame ON frames;
CREATE TRIGGER search_frame AFTER INSERT ON frames
    FOR EACH ROW WHEN (substring(NEW.payload FROM 1 FOR 14) <> convert_to('{"type":"tool_', 'UTF8')
        AND substring(NEW.payload FROM 1 FOR 18) <> convert_to('{"type":"proposal"', 'UTF8'))
    EXECUTE FUNCTION purser_search_queue();

-- +goose Down
DROP TRIGGER search_frame ON frames;
CREATE TRIGGER search_frame AFTER INSERT ON frames
    FOR EACH ROW EXECUTE FUNCTION purser_search_queue();
