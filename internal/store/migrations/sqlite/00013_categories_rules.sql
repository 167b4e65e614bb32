-- +goose Up
-- Categories and rules. Every person starts with the default categories
-- (a list in the code, store.DefaultCategories, so it needs no row per
-- person); categories holds the ones a person adds. A rule files an entry
-- whose description or merchant contains its pattern under its category:
-- pattern is kept folded (lower case, accents taken off, see
-- store.FoldText), and where several rules match, the longest pattern
-- wins, then the oldest rule (lowest id). Ids are numbered per user.
--
-- SQLite matches entries against a pattern with purser_fold(), a function
-- the store registers on every connection (Postgres has it as SQL).
CREATE TABLE categories (
    tenant_id  TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, name)
);
CREATE TABLE category_rules (
    tenant_id  TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    id         INTEGER NOT NULL,
    pattern    TEXT    NOT NULL,
    category   TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id),
    UNIQUE (tenant_id, user_id, pattern)
);
-- Every entry has a category: one without gets 'other' (no rule exists
-- yet to say better). No table is rebuilt, so ledger_entries stays.
UPDATE expenses SET category = 'other' WHERE category = '';
UPDATE transactions SET category = 'other' WHERE category = '';

-- +goose Down
-- Entries filed under 'other' by the Up keep it.
DROP TABLE category_rules;
DROP TABLE categories;
