INSERT INTO items (sku, price, added_on, labels, attrs) VALUES
	('bolt-m6', 0.12, '2024-01-15', '{metal,"small parts"}', '{"pack": 100}'),
	('nut-m6', 0.08, '2024-01-16', '{metal}', NULL);
DO $$
BEGIN
	IF (SELECT count(*) FROM items) <> 2 THEN
		RAISE EXCEPTION 'seed: % items', (SELECT count(*) FROM items);
	END IF;
END
$$;
