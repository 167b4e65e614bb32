-- +goose Up
-- A message's id is unique among the messages still to publish, instead
-- of among all kept: the index of every kept id took a page at a random
-- place for each message stored and again for each pruned, a fifth of
-- the pages a bench turn wrote to SQLite's log. Indexed while pending, it
-- holds a few hundred ids. A handler that stores a message again after
-- it was published sends a copy that JetStream drops within its
-- duplicate window, and that the consumers, idempotent by the same id,
-- ignore after it.
ALTER TABLE outbox DROP CONSTRAINT outbox_id_key;
CREATE UNIQUE INDEX outbox_id_pending ON outbox (id) WHERE published_at IS NULL;

-- +goose Down
DROP INDEX outbox_id_pending;
DELETE FROM outbox a USING outbox b WHERE a.id = b.id AND a.seq > b.seq;
ALTER TABLE outbox ADD CONSTRAINT outbox_id_key UNIQUE (id);
