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
    id              BIGSERIAL   PRIMARY KEY,
    tenant_id       TEXT        NOT NULL,
    user_id         TEXT        NOT NULL,
    kind            TEXT        NOT NULL CHECK (kind IN ('entry', 'document', 'message')),
    ref             TEXT        NOT NULL,
    parent          TEXT        NOT NULL,
    title           TEXT        NOT NULL,
    snippet         TEXT        NOT NULL,
    body            TEXT        NOT NULL,
    date            TEXT        NOT NULL,
    amount_minor    BIGINT,
    currency        TEXT        NOT NULL,
    embedding       BYTEA,
    embedding_model TEXT        NOT NULL DEFAULT '',
    updated_at      TIMESTAMPTZ NOT NULL,
    -- The 'simple' configuration only splits and lower-cases: the words
    -- are already folded, and no language's stemming or stop words apply
    -- to a ledger written in several.
    tsv             TSVECTOR    GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED,
    UNIQUE (tenant_id, user_id, kind, ref)
);
CREATE INDEX search_docs_tsv ON search_docs USING GIN (tsv);
CREATE INDEX search_docs_embedding ON search_docs (embedding_model, id);

-- search_queue names what changed since the indexer last ran: triggers
-- write it in the same transaction as the change, so no write path can
-- forget to, and a change made twice is queued once. seq grows with every
-- queueing, so the indexer removes a row only if it was not queued again
-- while it worked.
CREATE TABLE search_queue (
    seq       BIGSERIAL PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    kind      TEXT NOT NULL,
    ref       TEXT NOT NULL,
    UNIQUE (tenant_id, user_id, kind, ref)
);

-- +goose StatementBegin
CREATE FUNCTION purser_search_queue() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r      RECORD;
    k      TEXT;
    target TEXT;
BEGIN
    IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
    IF TG_TABLE_NAME = 'expenses' THEN
        k := 'entry'; target := 'expense-' || r.id;
    ELSIF TG_TABLE_NAME = 'transactions' THEN
        k := 'entry'; target := 'transaction-' || r.id;
    ELSIF TG_TABLE_NAME = 'documents' THEN
        k := 'document'; target := r.id;
    ELSE
        -- Only frames of a conversation can be messages; the indexer
        -- keeps the ones a person reads as the conversation.
        IF r.conversation_id = '' THEN RETURN NULL; END IF;
        k := 'message'; target := r.seq::TEXT;
    END IF;
    INSERT INTO search_queue (tenant_id, user_id, kind, ref) VALUES (r.tenant_id, r.user_id, k, target)
        ON CONFLICT (tenant_id, user_id, kind, ref) DO UPDATE SET seq = nextval(pg_get_serial_sequence('search_queue', 'seq'));
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER search_expense AFTER INSERT OR UPDATE OR DELETE ON expenses
    FOR EACH ROW EXECUTE FUNCTION purser_search_queue();
CREATE TRIGGER search_transaction AFTER INSERT OR UPDATE OR DELETE ON transactions
    FOR EACH ROW EXECUTE FUNCTION purser_search_queue();
CREATE TRIGGER search_document_ins AFTER INSERT OR DELETE ON documents
    FOR EACH ROW EXECUTE FUNCTION purser_search_queue();
CREATE TRIGGER search_document_upd AFTER UPDATE OF filename, sender_domain, status, reading ON documents
    FOR EACH ROW EXECUTE FUNCTION purser_search_queue();
CREATE TRIGGER search_frame AFTER INSERT ON frames
    FOR EACH ROW EXECUTE FUNCTION purser_search_queue();

-- What existed before this migration is queued once.
INSERT INTO search_queue (tenant_id, user_id, kind, ref)
    SELECT tenant_id, user_id, 'entry', 'expense-' || id FROM expenses ON CONFLICT DO NOTHING;
INSERT INTO search_queue (tenant_id, user_id, kind, ref)
    SELECT tenant_id, user_id, 'entry', 'transaction-' || id FROM transactions ON CONFLICT DO NOTHING;
INSERT INTO search_queue (tenant_id, user_id, kind, ref)
    SELECT tenant_id, user_id, 'document', id FROM documents ON CONFLICT DO NOTHING;
INSERT INTO search_queue (tenant_id, user_id, kind, ref)
    SELECT tenant_id, user_id, 'message', seq::TEXT FROM frames WHERE conversation_id <> '' ON CONFLICT DO NOTHING;

-- +goose Down
DROP TRIGGER search_frame ON frames;
DROP TRIGGER search_document_upd ON documents;
DROP TRIGGER search_document_ins ON documents;
DROP TRIGGER search_transaction ON transactions;
DROP TRIGGER search_expense ON expenses;
DROP FUNCTION purser_search_queue();
DROP TABLE search_queue;
DROP TABLE search_docs;
