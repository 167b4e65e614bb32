-- +goose Up
-- Imports now know which account a line belongs to (MT940 :25:, OFX
-- ACCTID, camt), pair a transfer between two of the person's own
-- accounts (transfer_id names the other side on both), and link an
-- imported line to the expense typed by hand that it settles
-- (ledger_links): the ledger then counts the pair once, the bank line
-- standing for both.
DROP VIEW ledger_entries;

ALTER TABLE transactions ADD COLUMN account TEXT NOT NULL DEFAULT '';
ALTER TABLE transactions ADD COLUMN transfer_id INTEGER;

-- An expense is linked to at most one transaction and a transaction to at
-- most one expense.
CREATE TABLE ledger_links (
    tenant_id      TEXT    NOT NULL,
    user_id        TEXT    NOT NULL,
    expense_id     INTEGER NOT NULL,
    transaction_id INTEGER NOT NULL,
    created_at     TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, user_id, expense_id),
    UNIQUE (tenant_id, user_id, transaction_id)
);

-- Imports look up the lines of a day and amount (occurrences across
-- statements, transfers).
CREATE INDEX transactions_by_amount ON transactions (tenant_id, user_id, amount_minor, date);

-- link_id is the entry of the other kind this one is linked to, and
-- transfer_id the other side of a transfer, 0 when none or when the other
-- entry is gone (a deleted expense, an undone import): an entry is never
-- hidden or left out for one that no longer exists.
CREATE VIEW ledger_entries AS
    SELECT e.tenant_id, e.user_id, 'expense' AS kind, e.id, -e.amount_minor AS amount_minor, e.currency, e.date,
           e.item AS description, '' AS merchant, e.category, '' AS account, '' AS document_id,
           COALESCE((SELECT l.transaction_id FROM ledger_links l
                         JOIN transactions o ON o.id = l.transaction_id AND o.tenant_id = l.tenant_id AND o.user_id = l.user_id
                     WHERE l.tenant_id = e.tenant_id AND l.user_id = e.user_id AND l.expense_id = e.id), 0) AS link_id,
           0 AS transfer_id
    FROM expenses e
    UNION ALL
    SELECT t.tenant_id, t.user_id, 'transaction' AS kind, t.id, t.amount_minor, t.currency, t.date,
           t.description, t.vendor AS merchant, t.category, t.account, t.document_id,
           COALESCE((SELECT l.expense_id FROM ledger_links l
                         JOIN expenses o ON o.id = l.expense_id AND o.tenant_id = l.tenant_id AND o.user_id = l.user_id
                     WHERE l.tenant_id = t.tenant_id AND l.user_id = t.user_id AND l.transaction_id = t.id), 0) AS link_id,
           CASE WHEN t.transfer_id IS NULL THEN 0 ELSE COALESCE((SELECT o.id FROM transactions o
                     WHERE o.id = t.transfer_id AND o.tenant_id = t.tenant_id AND o.user_id = t.user_id), 0) END AS transfer_id
    FROM transactions t;

-- +goose Down
DROP VIEW ledger_entries;
DROP INDEX transactions_by_amount;
DROP TABLE ledger_links;
ALTER TABLE transactions DROP COLUMN transfer_id;
ALTER TABLE transactions DROP COLUMN account;
CREATE VIEW ledger_entries AS
    SELECT tenant_id, user_id, 'expense' AS kind, id, -amount_minor AS amount_minor, currency, date,
           item AS description, '' AS merchant, category, '' AS account, '' AS document_id
    FROM expenses
    UNION ALL
    SELECT tenant_id, user_id, 'transaction' AS kind, id, amount_minor, currency, date,
           description, vendor AS merchant, category, '' AS account, document_id
    FROM transactions;
