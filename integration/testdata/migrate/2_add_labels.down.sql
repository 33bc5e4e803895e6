DROP INDEX items_labels;
ALTER TABLE items DROP COLUMN attrs;
ALTER TABLE items DROP COLUMN labels;
