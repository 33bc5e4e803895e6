-- +goose NO TRANSACTION
-- +goose Up
CREATE INDEX CONCURRENTLY accounts_created_at ON accounts (created_at);

-- +goose Down
DROP INDEX CONCURRENTLY accounts_created_at;
