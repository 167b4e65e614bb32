-- +goose Up
-- Categories and rules. Every person starts with the default categories
-- (a list in the code, store.DefaultCategories, so it needs no row per
-- person); categories holds the ones a person adds. A rule files an entry
-- whose description or merchant contains its pattern under its category:
-- pattern is kept folded (lower case, accents taken off, see
-- store.FoldText), and where several rules match, the longest pattern
-- wins, then the oldest rule (lowest id). Ids are numbered per user.
CREATE TABLE categories (
    tenant_id  TEXT        NOT NULL,
    user_id    TEXT        NOT NULL,
    name       TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, user_id, name)
);
CREATE TABLE category_rules (
    tenant_id  TEXT        NOT NULL,
    user_id    TEXT        NOT NULL,
    id         BIGINT      NOT NULL,
    pattern    TEXT        NOT NULL,
    category   TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (tenant_id, user_id, id),
    UNIQUE (tenant_id, user_id, pattern)
);
-- purser_fold is store.FoldText in SQL, letter for letter (ASCII upper
-- case and the accented Latin letters to plain lower case; nothing else
-- changes, whatever the database's locale), so a pattern matches the same
-- entries on both engines. SQLite has it as a function the store
-- registers.
-- +goose StatementBegin
CREATE FUNCTION purser_fold(t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT translate(t, 'ABCDEFGHIJKLMNOPQRSTUVWXYZÀÁÂÃÄÅÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜÝàáâãäåçèéêëìíîïñòóôõöøùúûüýÿĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦħĨĩĪīĬĭĮįİıĴĵĶķĹĺĻļĽľŁłŃńŅņŇňŌōŎŏŐőŔŕŖŗŘřŚśŜŝŞşŠšŢţŤťŦŧŨũŪūŬŭŮůŰűŲųŴŵŶŷŸŹźŻżŽž', 'abcdefghijklmnopqrstuvwxyzaaaaaaceeeeiiiinoooooouuuuyaaaaaaceeeeiiiinoooooouuuuyyaaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiijjkkllllllllnnnnnnoooooorrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzz')
$$;
-- +goose StatementEnd
-- Every entry has a category: one without gets 'other' (no rule exists
-- yet to say better).
UPDATE expenses SET category = 'other' WHERE category = '';
UPDATE transactions SET category = 'other' WHERE category = '';

-- +goose Down
-- Entries filed under 'other' by the Up keep it.
DROP FUNCTION purser_fold(TEXT);
DROP TABLE category_rules;
DROP TABLE categories;
