-- +goose Up
-- ledger_entries reads a person's hand-added expenses and imported
-- transactions as one ledger: kind, signed amount in minor units (money
-- out negative: an expense is stored positive and is always money out, a
-- transaction is stored signed), currency, date, description, merchant,
-- category, account and source document. It is a view, so no row moves
-- and the write paths stay as they are; a later step may turn it into a
-- table of its own. Imports record no account yet, and expenses have no
-- merchant or document, so those columns are empty there.
--
-- A later migration that changes a column the view reads must drop the
-- view first and create it again after (Postgres refuses to change a
-- column a view depends on).
CREATE VIEW ledger_entries AS
    SELECT tenant_id, user_id, 'expense'::text AS kind, id, -amount_minor AS amount_minor, currency, date,
           item AS description, ''::text AS merchant, category, ''::text AS account, ''::text AS document_id
    FROM expenses
    UNION ALL
    SELECT tenant_id, user_id, 'transaction'::text AS kind, id, amount_minor, currency, date,
           description, vendor AS merchant, category, ''::text AS account, document_id
    FROM transactions;

-- A summary of a period reads only these columns of each table, so it is
-- answered from the indexes alone.
CREATE INDEX expenses_ledger ON expenses (tenant_id, user_id, date) INCLUDE (currency, category, amount_minor);
CREATE INDEX transactions_ledger ON transactions (tenant_id, user_id, date) INCLUDE (currency, category, amount_minor);

-- +goose Down
DROP INDEX transactions_ledger;
DROP INDEX expenses_ledger;
DROP VIEW ledger_entries;
