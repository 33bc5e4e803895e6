CREATE TABLE items (
	id       bigserial PRIMARY KEY,
	sku      varchar(32) NOT NULL UNIQUE,
	price    numeric(10, 2) NOT NULL,
	added_on date NOT NULL DEFAULT current_date
);
