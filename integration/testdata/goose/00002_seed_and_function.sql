-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION account_total() RETURNS numeric LANGUAGE plpgsql AS $$
DECLARE
	total numeric;
BEGIN
	SELECT coalesce(sum(balance), 0) INTO total FROM accounts;
	RETURN total;
END;
$$;
-- +goose StatementEnd
INSERT INTO accounts (email, balance, tags, meta) VALUES
	('a@example.org', 10.50, '{vip}', '{"plan": "gold"}'),
	('b@example.org', 0.25, '{}', NULL);

-- +goose Down
DELETE FROM accounts WHERE email IN ('a@example.org', 'b@example.org');
DROP FUNCTION account_total();
