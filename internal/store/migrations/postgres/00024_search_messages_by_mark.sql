-- +goose Up
-- SQLite's 00024 moves a conversation's messages from the search queue to
-- a mark over the frames' rowids. Postgres's frames have no such order
-- (their key is the user's seq), so its trigger keeps queueing them; this
-- version only keeps the two engines' numbers in step.
SELECT 1;

-- +goose Down
SELECT 1;
