-- +goose Up
-- Expenses are numbered per user instead of per tenant, so that an id
-- tells no one how many expenses the tenant's other people made. Every id
-- already given keeps naming the same expense. A user the tenant knows
-- (one with expenses, frames or any counter of their own) goes on from the
-- tenant's last number, not from one, so that no id a user deleted is
-- given to them again; a new user starts at one.
ALTER TABLE expenses DROP CONSTRAINT expenses_pkey;
ALTER TABLE expenses ADD PRIMARY KEY (tenant_id, user_id, id);
DROP INDEX expenses_by_date;
CREATE INDEX expenses_by_date ON expenses (tenant_id, user_id, date, id);

INSERT INTO counters (tenant_id, user_id, name, value)
    SELECT c.tenant_id, u.user_id, 'expense', c.value
    FROM counters c
    JOIN (SELECT tenant_id, user_id FROM expenses
          UNION SELECT tenant_id, user_id FROM frames
          UNION SELECT tenant_id, user_id FROM counters WHERE user_id <> '') u ON u.tenant_id = c.tenant_id
    WHERE c.user_id = '' AND c.name = 'expense';
DELETE FROM counters WHERE user_id = '' AND name = 'expense';

-- +goose Down
-- Fails when two users of a tenant hold the same number: tenant-wide ids
-- cannot name both.
ALTER TABLE expenses DROP CONSTRAINT expenses_pkey;
ALTER TABLE expenses ADD PRIMARY KEY (tenant_id, id);
DROP INDEX expenses_by_date;
CREATE INDEX expenses_by_date ON expenses (tenant_id, date, id);

INSERT INTO counters (tenant_id, user_id, name, value)
    SELECT tenant_id, '', 'expense', MAX(value) FROM counters WHERE user_id <> '' AND name = 'expense' GROUP BY tenant_id;
DELETE FROM counters WHERE user_id <> '' AND name = 'expense';
