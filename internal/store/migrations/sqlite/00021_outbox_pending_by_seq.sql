-- +goose Up
-- The relay reads the pending messages in seq order. Indexed by
-- (created_at, seq), that order was not the index's, and SQLite read the
-- whole table by seq instead, published rows and all: every second, and
-- for every redelivered turn, a pass over the retention's messages (ten
-- minutes of them, two or three a turn), which took 15% of purser's CPU
-- in a 20-second bench. By seq alone the read walks the pending rows
-- only, in the order it wants.
DROP INDEX outbox_pending;
CREATE INDEX outbox_pending ON outbox (seq) WHERE published_at IS NULL;

-- +goose Down
DROP INDEX outbox_pending;
CREATE INDEX outbox_pending ON outbox (created_at, seq) WHERE published_at IS NULL;
