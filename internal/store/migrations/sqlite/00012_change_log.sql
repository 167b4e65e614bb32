-- +goose Up
-- change_log keeps each approved change to a person's ledger, written in
-- the same database transaction as the change itself, so that "undo that"
-- can revert exactly it: kind (expense_add, expense_update,
-- expense_delete, transaction_update, import, undo), the entry it names
-- (an expense or transaction number, or an import's document id), a label
-- a person reads (the file of an import), and the entry's images before
-- and after as JSON (an import's after image lists the transactions it
-- added). undoes names the change an undo reverted; undone_by is set, once,
-- on the change an undo reverted. Only new tables: no view is touched.
CREATE TABLE change_log (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    call_id    TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('expense_add', 'expense_update', 'expense_delete', 'transaction_update', 'import', 'undo')),
    entity     TEXT    NOT NULL,
    label      TEXT    NOT NULL,
    before     TEXT,
    after      TEXT,
    undoes     INTEGER,
    undone_by  INTEGER,
    created_at TEXT    NOT NULL
);
CREATE INDEX change_log_by_user ON change_log (tenant_id, user_id, id);

-- +goose Down
DROP TABLE change_log;
