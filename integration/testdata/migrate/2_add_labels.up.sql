ALTER TABLE items ADD COLUMN labels text[] NOT NULL DEFAULT '{}';
ALTER TABLE items ADD COLUMN attrs jsonb;
CREATE INDEX items_labels ON items USING gin (labels);
