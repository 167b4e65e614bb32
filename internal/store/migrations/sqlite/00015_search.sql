-- +goose Up
-- search_docs holds, per user, one row for each thing a person can find
-- with the search tool: a ledger entry (ref "expense-<id>" or
-- "transaction-<id>", as the ledger API names it), a document (its id) or
-- a conversation message (its frame's seq). body is the folded words the
-- lexical index reads (written by the indexer in Go, so both engines see
-- the same words); title and snippet are shown; embedding is the vector
-- of the embeddings model named beside it, filled later and only when an
-- embeddings server is configured.
CREATE TABLE search_docs (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id       TEXT    NOT NULL,
    user_id         TEXT    NOT NULL,
    kind            TEXT    NOT NULL CHECK (kind IN ('entry', 'document', 'message')),
    ref             TEXT    NOT NULL,
    parent          TEXT    NOT NULL,
    title           TEXT    NOT NULL,
    snippet         TEXT    NOT NULL,
    body            TEXT    NOT NULL,
    date            TEXT    NOT NULL,
    amount_minor    INTEGER,
    currency        TEXT    NOT NULL,
    embedding       BLOB,
    embedding_model TEXT    NOT NULL DEFAULT '',
    updated_at      TEXT    NOT NULL,
    UNIQUE (tenant_id, user_id, kind, ref)
);
CREATE INDEX search_docs_embedding ON search_docs (embedding_model, id);

-- The lexical index reads search_docs.body (external content): the
-- triggers keep it in step. remove_diacritics 2 folds accents the way the
-- indexer already did, for text written by an older indexer.
CREATE VIRTUAL TABLE search_fts USING fts5(body, content = 'search_docs', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2');
-- +goose StatementBegin
CREATE TRIGGER search_docs_ai AFTER INSERT ON search_docs BEGIN
    INSERT INTO search_fts (rowid, body) VALUES (new.id, new.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_docs_ad AFTER DELETE ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', old.id, old.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_docs_au AFTER UPDATE OF body ON search_docs BEGIN
    INSERT INTO search_fts (search_fts, rowid, body) VALUES ('delete', old.id, old.body);
    INSERT INTO search_fts (rowid, body) VALUES (new.id, new.body);
END;
-- +goose StatementEnd

-- search_queue names what changed since the indexer last ran: triggers
-- write it in the same transaction as the change, so no write path can
-- forget to, and a change made twice is queued once. seq grows with every
-- queueing, so the indexer removes a row only if it was not queued again
-- while it worked.
CREATE TABLE search_queue (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    kind      TEXT NOT NULL,
    ref       TEXT NOT NULL,
    UNIQUE (tenant_id, user_id, kind, ref)
);

-- +goose StatementBegin
CREATE TRIGGER search_expense_ins AFTER INSERT ON expenses BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'entry', 'expense-' || new.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_expense_upd AFTER UPDATE ON expenses BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'entry', 'expense-' || new.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_expense_del AFTER DELETE ON expenses BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (old.tenant_id, old.user_id, 'entry', 'expense-' || old.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_transaction_ins AFTER INSERT ON transactions BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'entry', 'transaction-' || new.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_transaction_upd AFTER UPDATE ON transactions BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'entry', 'transaction-' || new.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_transaction_del AFTER DELETE ON transactions BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (old.tenant_id, old.user_id, 'entry', 'transaction-' || old.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_document_ins AFTER INSERT ON documents BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'document', new.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_document_upd AFTER UPDATE OF filename, sender_domain, status, reading ON documents BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'document', new.id);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER search_document_del AFTER DELETE ON documents BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (old.tenant_id, old.user_id, 'document', old.id);
END;
-- +goose StatementEnd
-- Only frames of a conversation can be messages; the indexer keeps the
-- ones a person reads as the conversation and drops the rest.
-- +goose StatementBegin
CREATE TRIGGER search_frame_ins AFTER INSERT ON frames WHEN new.conversation_id <> '' BEGIN
    INSERT OR REPLACE INTO search_queue (tenant_id, user_id, kind, ref) VALUES (new.tenant_id, new.user_id, 'message', CAST(new.seq AS TEXT));
END;
-- +goose StatementEnd

-- What existed before this migration is queued once.
INSERT OR IGNORE INTO search_queue (tenant_id, user_id, kind, ref)
    SELECT tenant_id, user_id, 'entry', 'expense-' || id FROM expenses;
INSERT OR IGNORE INTO search_queue (tenant_id, user_id, kind, ref)
    SELECT tenant_id, user_id, 'entry', 'transaction-' || id FROM transactions;
INSERT OR IGNORE INTO search_queue (tenant_id, user_id, kind, ref)
    SELECT tenant_id, user_id, 'document', id FROM documents;
INSERT OR IGNORE INTO search_queue (tenant_id, user_id, kind, ref)
    SELECT tenant_id, user_id, 'message', CAST(seq AS TEXT) FROM frames WHERE conversation_id <> '';

-- +goose Down
DROP TRIGGER search_frame_ins;
DROP TRIGGER search_document_del;
DROP TRIGGER search_document_upd;
DROP TRIGGER search_document_ins;
DROP TRIGGER search_transaction_del;
DROP TRIGGER search_transaction_upd;
DROP TRIGGER search_transaction_ins;
DROP TRIGGER search_expense_del;
DROP TRIGGER search_expense_upd;
DROP TRIGGER search_expense_ins;
DROP TABLE search_queue;
DROP TRIGGER search_docs_au;
DROP TRIGGER search_docs_ad;
DROP TRIGGER search_docs_ai;
DROP TABLE search_fts;
DROP TABLE search_docs;
