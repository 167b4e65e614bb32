-- +goose Up
-- A user's own defaults: the currency of an amount or a statement that
-- names none, their time zone, and the day/month order of their dates.
CREATE TABLE user_settings (
    tenant_id  TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    currency   TEXT NOT NULL DEFAULT '',
    timezone   TEXT NOT NULL DEFAULT '',
    date_order TEXT NOT NULL DEFAULT '',
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, user_id)
);

-- +goose Down
DROP TABLE user_settings;
