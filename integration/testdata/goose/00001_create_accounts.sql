-- +goose Up
CREATE TABLE accounts (
	id         bigserial PRIMARY KEY,
	email      varchar(254) NOT NULL UNIQUE,
	balance    numeric(12, 2) NOT NULL DEFAULT 0,
	created_at timestamptz NOT NULL DEFAULT now(),
	tags       text[] NOT NULL DEFAULT '{}',
	meta       jsonb
);

-- +goose Down
DROP TABLE accounts;
