-- +goose Up
-- A message's id is unique among the messages still to publish, instead
-- of among all kept: the index of every kept id took a page at a random
-- place for each message stored and again for each pruned, a fifth of
-- the pages a bench turn wrote to the log. Indexed while pending, it holds
-- a few hundred ids, on pages every commit shares. A handler that stores
-- a message again after it was published sends a copy that JetStream
-- drops within its duplicate window, and that the consumers, idempotent
-- by the same id, ignore after it. SQLite keeps a UNIQUE column in the
-- table's definition, so the table is made again; seq keeps its values.
CREATE TABLE outbox_new (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT        NOT NULL,
    subject      TEXT        NOT NULL,
    headers      TEXT,
    payload      BLOB        NOT NULL,
    created_at   TEXT        NOT NULL,
    published_at TEXT
);
INSERT INTO outbox_new (seq, id, subject, headers, payload, created_at, published_at)
    SELECT seq, id, subject, headers, payload, created_at, published_at FROM outbox ORDER BY seq;
DROP TABLE outbox;
ALTER TABLE outbox_new RENAME TO outbox;
CREATE INDEX outbox_pending ON outbox (seq) WHERE published_at IS NULL;
CREATE UNIQUE INDEX outbox_id_pending ON outbox (id) WHERE published_at IS NULL;

-- +goose Down
CREATE TABLE outbox_old (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT        NOT NULL UNIQUE,
    subject      TEXT        NOT NULL,
    headers      TEXT,
    payload      BLOB        NOT NULL,
    created_at   TEXT        NOT NULL,
    published_at TEXT
);
INSERT OR IGNORE INTO outbox_old (seq, id, subject, headers, payload, created_at, published_at)
    SELECT seq, id, subject, headers, payload, created_at, published_at FROM outbox ORDER BY seq;
DROP TABLE outbox;
ALTER TABLE outbox_old RENAME TO outbox;
CREATE INDEX outbox_pending ON outbox (seq) WHERE published_at IS NULL;
