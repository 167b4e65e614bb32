-- +goose Up
-- SQLite: instants are fixed-width RFC 3339 UTC text (see dialect.go), so they sort.
CREATE TABLE counters (
    tenant_id TEXT   NOT NULL,
    user_id   TEXT   NOT NULL,
    name      TEXT   NOT NULL,
    value     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, user_id, name)
);

CREATE TABLE conversations (
    tenant_id       TEXT        NOT NULL,
    conversation_id TEXT        NOT NULL,
    user_id         TEXT        NOT NULL,
    version         INTEGER      NOT NULL,
    state           TEXT,
    updated_at      TEXT        NOT NULL,
    PRIMARY KEY (tenant_id, conversation_id)
);

CREATE TABLE outbox (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT        NOT NULL UNIQUE,
    subject      TEXT        NOT NULL,
    headers      TEXT,
    payload      BLOB        NOT NULL,
    created_at   TEXT        NOT NULL,
    published_at TEXT       
);
CREATE INDEX outbox_pending ON outbox (created_at, seq) WHERE published_at IS NULL;

CREATE TABLE proposals (
    tenant_id       TEXT        NOT NULL,
    id              TEXT        NOT NULL,
    user_id         TEXT        NOT NULL,
    conversation_id TEXT        NOT NULL,
    turn_id         TEXT        NOT NULL,
    tool            TEXT        NOT NULL,
    args            TEXT,
    summary         TEXT        NOT NULL,
    status          TEXT        NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'executed', 'expired')),
    revision        INTEGER     NOT NULL,
    expires_at      TEXT        NOT NULL,
    created_at      TEXT        NOT NULL,
    decided_at      TEXT       ,
    PRIMARY KEY (tenant_id, id)
);

CREATE TABLE expenses (
    tenant_id    TEXT        NOT NULL,
    id           INTEGER      NOT NULL,
    user_id      TEXT        NOT NULL,
    item         TEXT        NOT NULL,
    amount_minor INTEGER      NOT NULL,
    currency     TEXT        NOT NULL,
    date         TEXT        NOT NULL,
    category     TEXT        NOT NULL,
    created_at   TEXT        NOT NULL,
    updated_at   TEXT        NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX expenses_by_date ON expenses (tenant_id, date, id);

CREATE TABLE transactions (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id     TEXT        NOT NULL,
    user_id       TEXT        NOT NULL,
    document_id   TEXT        NOT NULL,
    date          TEXT        NOT NULL,
    amount_minor  INTEGER      NOT NULL,
    currency      TEXT        NOT NULL,
    description   TEXT        NOT NULL,
    vendor        TEXT        NOT NULL,
    category      TEXT        NOT NULL,
    fitid         TEXT        NOT NULL,
    dedupe_key    TEXT        NOT NULL,
    review_status TEXT        NOT NULL CHECK (review_status IN ('ok', 'needs_review')),
    created_at    TEXT        NOT NULL,
    UNIQUE (tenant_id, user_id, dedupe_key)
);
CREATE INDEX transactions_by_date ON transactions (tenant_id, user_id, date, id);

CREATE TABLE documents (
    tenant_id         TEXT        NOT NULL,
    id                TEXT        NOT NULL,
    user_id           TEXT        NOT NULL,
    sha256            TEXT        NOT NULL,
    filename          TEXT        NOT NULL,
    media_type        TEXT        NOT NULL,
    source_message_id TEXT        NOT NULL,
    size              INTEGER      NOT NULL,
    content           BLOB ,
    status            TEXT        NOT NULL CHECK (status IN ('queued', 'imported', 'failed')),
    detail            TEXT        NOT NULL,
    imported          INTEGER     NOT NULL,
    created_at        TEXT        NOT NULL,
    updated_at        TEXT        NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, user_id, sha256)
);
CREATE INDEX documents_recent ON documents (tenant_id, user_id, created_at);

CREATE TABLE notifications (
    tenant_id  TEXT        NOT NULL,
    id         TEXT        NOT NULL,
    user_id    TEXT        NOT NULL,
    kind       TEXT        NOT NULL,
    title      TEXT        NOT NULL,
    body       TEXT        NOT NULL,
    data       TEXT,
    created_at TEXT        NOT NULL,
    read_at    TEXT       ,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX notifications_by_user ON notifications (tenant_id, user_id, created_at);

CREATE TABLE frames (
    tenant_id  TEXT        NOT NULL,
    user_id    TEXT        NOT NULL,
    seq        INTEGER      NOT NULL,
    event_id   TEXT,
    payload    BLOB        NOT NULL,
    created_at TEXT        NOT NULL,
    PRIMARY KEY (tenant_id, user_id, seq)
);
CREATE UNIQUE INDEX frames_event ON frames (tenant_id, user_id, event_id);

CREATE TABLE audit_log (
    tenant_id   TEXT        NOT NULL,
    id          TEXT        NOT NULL,
    user_id     TEXT        NOT NULL,
    tool        TEXT        NOT NULL,
    call_id     TEXT        NOT NULL,
    outcome     TEXT        NOT NULL,
    args        TEXT,
    duration_ms INTEGER      NOT NULL,
    created_at  TEXT        NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX audit_recent ON audit_log (tenant_id, created_at);

CREATE TABLE tool_calls (
    tenant_id  TEXT        NOT NULL,
    call_id    TEXT        NOT NULL,
    tool       TEXT        NOT NULL,
    result     TEXT,
    created_at TEXT        NOT NULL,
    PRIMARY KEY (tenant_id, call_id)
);

-- +goose Down
DROP TABLE tool_calls;
DROP TABLE audit_log;
DROP TABLE frames;
DROP TABLE notifications;
DROP TABLE documents;
DROP TABLE transactions;
DROP TABLE expenses;
DROP TABLE proposals;
DROP TABLE outbox;
DROP TABLE conversations;
DROP TABLE counters;
