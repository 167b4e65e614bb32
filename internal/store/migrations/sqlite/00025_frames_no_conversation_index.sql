-- +goose Up
-- A conversation's frames are read back from the user's frames by seq
-- (the primary key), newest first, keeping the conversation's: the index
-- by conversation was a page written at the user's place for every frame
-- stored, about a tenth of what a turn wrote, for a history read when a
-- person opens a conversation or the model asks for it. Such a read now
-- walks the user's frames since the page it wants, of every
-- conversation: the latest of a conversation in use are near the end.
DROP INDEX frames_conversation;

-- +goose Down
CREATE INDEX frames_conversation ON frames (tenant_id, user_id, conversation_id, seq);
