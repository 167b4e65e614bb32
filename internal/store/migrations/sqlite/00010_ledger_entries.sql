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
-- On SQLite a view names its tables: a later migration that rebuilds
-- expenses or transactions (create, copy, drop, rename) must drop this
-- view first and create it again after.
CREATE VIEW ledger_entries AS
    SELECT tenant_id, user_id, 'expense' AS kind, id, -amount_minor AS amount_minor, currency, date,
           item AS description, '' AS merchant, category, '' AS account, '' AS document_id
    FROM expenses
    UNION ALL
    SELECT tenant_id, user_id, 'transaction' AS kind, id, amount_minor, currency, date,
           description, vendor AS merchant, category, '' AS account, document_id
    FROM transactions;

-- No index of its own: a query of the view finds its rows through
-- expenses_by_date and transactions_by_date. (SQLite reads whole rows of
-- a UNION ALL view's tables, so an index covering the summary's columns,
-- as on Postgres, would not spare it the table reads: its plan showed it.)

-- +goose Down
DROP VIEW ledger_entries;
