DELETE FROM items WHERE sku IN ('bolt-m6', 'nut-m6');
