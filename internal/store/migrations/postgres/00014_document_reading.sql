-- +goose Up
-- What a reader made of an uploaded document, as JSON: for a receipt its
-- merchant, date, total, currency and line items. The items are kept with
-- the document, the expense holds the total.
ALTER TABLE documents ADD COLUMN reading TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE documents DROP COLUMN reading;
